// One recogniser thread: a decoder loaded once, then utterance after utterance. Decoding is CPU
// work in C; it runs here so the event loop that paces audio never waits on it, and several of
// these threads decode in parallel on several cores. Messages: see protocol.ts.
import { parentPort, workerData } from 'node:worker_threads';

const port = parentPort;
// [busy, stopping] (media/native-thread-guard.ts): no call into libpocketsphinx starts while the
// process exits, and the exit waits for the one in flight. koffi aborts the process (FATAL ERROR
// napi_throw) when the thread is torn down inside one, e.g. a server stopped while its
// recognisers load their models.
const flags = workerData.flags;
const idle = () => {
  Atomics.store(flags, 0, 0);
  Atomics.notify(flags, 0);
};
/** Busy before the stopping check (the exit sets them the other way round): one of the two sees the other. */
function begin() {
  Atomics.store(flags, 0, 1);
  if (Atomics.load(flags, 1) === 1) {
    idle();
    process.exit(0);
  }
}

begin();
let decoder;
try {
  // Imported only now, under busy: loading koffi's native addon is as fatal to interrupt as a
  // model load (a process that exited 100-150 ms after starting a recogniser aborted inside
  // koffi's module registration, 4 times in 240).
  const { Decoder } = await import('./decoder.mjs');
  // undefined: the server's SEARCH_SETTINGS (benchmarks pass others to compare them).
  decoder = new Decoder(workerData.searchSettings);
} finally {
  idle();
}
/** The utterance being decoded; commands for any other id are stale and answered empty. */
let current;

function handle(command) {
  // Ending between two commands, never inside a call into the library: terminating a thread in
  // the middle of a native call brings the whole process down.
  if (command.t === 'close') {
    decoder.free();
    process.exit(0);
  }
  if (command.t === 'open') {
    decoder.start();
    current = command.id;
    return;
  }
  if (command.id !== current) {
    if (command.t === 'finish') port.postMessage({ t: 'failed', id: command.id, error: 'unknown utterance' });
    if (command.t === 'partial') port.postMessage({ t: 'partial', id: command.id, text: '' });
    if (command.t === 'posterior') port.postMessage({ t: 'posterior', id: command.id });
    if (command.t === 'sentence_end') port.postMessage({ t: 'sentence_end', id: command.id });
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
    case 'sentence_end':
      port.postMessage({ t: 'sentence_end', id: command.id, probability: decoder.sentenceEnd() });
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
  begin();
  try {
    handle(command);
  } catch (error) {
    current = undefined;
    port.postMessage({ t: 'failed', id: command.id, error: error instanceof Error ? error.message : String(error) });
  } finally {
    idle();
  }
});
port.postMessage({ t: 'ready' });
