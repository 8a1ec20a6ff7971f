#!/usr/bin/env node
/**
 * The package build (npm run build; also run by `prepare` and `prestart`): dist/ holds what the
 * package ships and nothing else.
 *
 * - tsc compiles the shipped code (.ci/tsconfig.build.json) with declarations, in build mode:
 *   with nothing changed it checks file dates only and the whole build takes about a second.
 * - Declarations keep our `.ts` import specifiers; they are rewritten to `.js` so every
 *   TypeScript a consumer might use resolves them (TypeScript 5.9 rewrites only the JavaScript).
 * - The browser library ships as one bundle, dist/client.js (what `./client` exports and the server
 *   serves at /client.js), so its per-file JavaScript from tsc is removed; its declarations stay.
 * - Files that are not TypeScript but are loaded at run time are copied beside the compiled code,
 *   at the same relative paths as in the sources.
 *
 * A server may be running from dist/ while a build runs (tests start one while another packs):
 * builds take turns (a lock), and a file is only written when its content changed, by renaming a
 * complete copy over it, so a reader never sees half a file.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const LOCK = join(ROOT, 'node_modules/.cache/parley-build.lock');
/**
 * Loaded at run time but not TypeScript: every plain-JavaScript module of the server (helper
 * processes, worker threads) and the demo page's folder. Screenshots, tests and the scripts that
 * only serve a development checkout stay out.
 */
const ASSET_DIRS = ['signaling', 'session', 'media', 'client/demo'];
const ASSET = /\.(mjs|html|js|css)$/;
const NOT_SHIPPED = /\.test\.|\/testing\/|\/e2e\//;
const DEVELOPMENT_ONLY = ['media/webrtc/media-worker-entry.mjs'];
const BIN = 'signaling/cli/parley.js';

const require = createRequire(import.meta.url);
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
  require.resolve('esbuild');
} catch {
  // A clone installed without development dependencies (npm ci --omit=dev) cannot build. With
  // --if-possible (prepare, prestart) the install goes on, or the server starts from the dist/
  // built before they were pruned; only a missing dist/ is worth a line then.
  const ifPossible = process.argv.includes('--if-possible');
  if (!ifPossible || !existsSync(join(DIST, 'signaling/main.js'))) {
    process.stderr.write('parley: dist/ cannot be built here: TypeScript and esbuild are development dependencies (npm ci, which builds, then npm prune --omit=dev)\n');
  }
  process.exit(ifPossible ? 0 : 1);
}
const { buildClient } = await import('../client/build.mjs');

await withLock(async () => {
  execFileSync(process.execPath, [tsc, '--build', join(ROOT, '.ci/tsconfig.build.json')], { stdio: 'inherit' });
  for (const file of walk(DIST)) {
    if (file.endsWith('.d.ts')) writeIfChanged(file, readFileSync(file, 'utf8').replace(/(['"])(\.{1,2}\/[^'"\n]*?)\.ts\1/g, '$1$2.js$1'));
    else if (file.startsWith(join(DIST, 'client/src/')) && /\.js(\.map)?$/.test(file)) rmSync(file);
  }
  for (const dir of ASSET_DIRS) {
    for (const file of [...walk(join(ROOT, dir))].map((path) => relative(ROOT, path))) {
      if (ASSET.test(file) && !NOT_SHIPPED.test(file) && !DEVELOPMENT_ONLY.includes(file)) writeIfChanged(join(DIST, file), readFileSync(join(ROOT, file)));
    }
  }
  const { outputFiles } = await buildClient({ outfile: join(DIST, 'client.js'), write: false });
  for (const output of outputFiles) writeIfChanged(output.path, Buffer.from(output.contents));
  chmodSync(join(DIST, BIN), 0o755);
});

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

function writeIfChanged(file, content) {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  if (existsSync(file) && readFileSync(file).equals(bytes)) return;
  mkdirSync(dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, bytes);
  renameSync(partial, file);
}

/** One build at a time in this checkout; a lock older than ten minutes is a crashed build's. */
async function withLock(build) {
  mkdirSync(dirname(LOCK), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      if (Date.now() - statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs > 600_000) rmSync(LOCK, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    await build();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
