// One recogniser thread: a decoder loaded once, then utterance after utterance. Decoding is CPU
// work in C; it runs here so the event loop that paces audio never waits on it, and several of
// these threads decode in parallel on several cores. Messages: see protocol.ts.
import { parentPort } from 'node:worker_threads';
import { Decoder } from './decoder.mjs';

const port = parentPort;
const decoder = new Decoder();
/** The utterance being decoded; commands for any other id are stale and answered empty. */
let current;

function handle(command) {
  // Ending between two commands, never inside a call into the library: terminating a thread in
  // the middle of a native call brings the whole process down.
  if (command.t === 'close') process.exit(0);
  if (command.t === 'open') {
    decoder.start();
    current = command.id;
    return;
  }
  if (command.id !== current) {
    if (command.t === 'finish') port.postMessage({ t: 'failed', id: command.id, error: 'unknown utterance' });
    if (command.t === 'partial') port.postMessage({ t: 'partial', id: command.id, text: '' });
    if (command.t === 'posterior') port.postMessage({ t: 'posterior', id: command.id });
    return;
  }
  switch (command.t) {
    case 'audio':
      decoder.process(command.pcm);
      return;
    case 'partial':
      port.postMessage({ t: 'partial', id: command.id, text: decoder.partial() });
      return;
    case 'posterior':
      port.postMessage({ t: 'posterior', id: command.id, posterior: decoder.lastWord()?.posterior });
      return;
    case 'finish':
      current = undefined;
      port.postMessage({ t: 'final', id: command.id, text: decoder.end() });
      return;
    case 'abort':
      current = undefined;
      decoder.end();
  }
}

port.on('message', (command) => {
  try {
    handle(command);
  } catch (error) {
    current = undefined;
    port.postMessage({ t: 'failed', id: command.id, error: error instanceof Error ? error.message : String(error) });
  }
});
port.postMessage({ t: 'ready' });
