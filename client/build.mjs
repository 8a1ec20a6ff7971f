#!/usr/bin/env node
/**
 * Builds the browser library into one ES module, dist/client.js (npm run build:client), for
 * bundlers importing `parley/client`. The server does not need it: it bundles client/src on the
 * fly for /client.js. Same esbuild options as the server's bundle, plus a linked source map.
 */
import { build } from 'esbuild';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ENTRY = fileURLToPath(new URL('./src/index.ts', import.meta.url));
const DEFAULT_OUT = fileURLToPath(new URL('../dist/client.js', import.meta.url));

/** `write: false` leaves writing to the caller: the result's outputFiles hold the bundle and its map. */
export async function buildClient({ outfile = DEFAULT_OUT, minify = false, write = true } = {}) {
  const result = await build({
    write,
    entryPoints: [ENTRY],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    sourcemap: 'linked',
    legalComments: 'none',
    minify,
    metafile: true,
    logLevel: 'warning',
  });
  return { outfile, inputs: Object.keys(result.metafile.inputs), outputFiles: result.outputFiles ?? [] };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { outfile, inputs } = await buildClient({ minify: process.argv.includes('--minify') });
  console.log(`built ${outfile} from ${inputs.length} modules`);
}
