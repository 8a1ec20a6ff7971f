#!/usr/bin/env node
/**
 * The package build (npm run build; also run by `prepare` and `prestart`): dist/ holds
 * what the package ships and nothing else.
 *
 * - tsc compiles the shipped code (.ci/tsconfig.build.json) with declarations, in build mode:
 *   with nothing changed it checks file dates only and the whole build takes about a second.
 * - Declarations keep our `.ts` import specifiers; they are rewritten to `.js` so every
 *   TypeScript a consumer might use resolves them (TypeScript 5.9 rewrites only the JavaScript).
 * - The browser library ships as one bundle, dist/client.js (what `./client` exports and the server
 *   serves at /client.js), so its per-file JavaScript from tsc is removed; its declarations stay.
 * - Files that are not TypeScript but are loaded at run time are copied beside the compiled code,
 *   at the same relative paths as in the sources.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
  require.resolve('esbuild');
} catch {
  // A clone installed without development dependencies (npm ci --omit=dev) cannot build.
  const why = 'parley: dist/ cannot be built here: TypeScript and esbuild are development dependencies (npm ci without --omit=dev, npm run build, then npm prune --omit=dev)';
  process.stderr.write(`${why}\n`);
  // --if-possible (prepare, prestart): the install goes on, or the server starts from the dist/
  // built before the development dependencies were pruned; `npm run build` fails.
  process.exit(process.argv.includes('--if-possible') ? 0 : 1);
}
const { buildClient } = await import('../client/build.mjs');

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
/**
 * Loaded at run time but not TypeScript: every plain-JavaScript module of the server (helper
 * processes, worker threads) and the demo page's folder. Screenshots, tests and the scripts that
 * only serve a development checkout stay out.
 */
const ASSET_DIRS = ['signaling', 'session', 'media', 'client/demo'];
const ASSET = /\.(mjs|html|js|css)$/;
const NOT_SHIPPED = /\.test\.|\/testing\/|\/e2e\//;
const DEVELOPMENT_ONLY = ['media/webrtc/media-worker-entry.mjs', 'media/webrtc/werift-patch.mjs'];
const BIN = 'signaling/cli/parley.js';

execFileSync(process.execPath, [tsc, '--build', join(ROOT, '.ci/tsconfig.build.json')], { stdio: 'inherit' });

for (const file of walk(DIST)) {
  if (file.endsWith('.d.ts')) rewriteSpecifiers(file);
  else if (file.startsWith(join(DIST, 'client/src/')) && /\.js(\.map)?$/.test(file)) rmSync(file);
}
for (const dir of ASSET_DIRS) {
  for (const file of [...walk(join(ROOT, dir))].map((path) => relative(ROOT, path))) {
    if (!ASSET.test(file) || NOT_SHIPPED.test(file) || DEVELOPMENT_ONLY.includes(file)) continue;
    mkdirSync(dirname(join(DIST, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(DIST, file));
  }
}
await buildClient({ outfile: join(DIST, 'client.js') });
chmodSync(join(DIST, BIN), 0o755);

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

/** `from './x.ts'` and `import('../y.ts')` → `.js`; package specifiers are left alone. */
function rewriteSpecifiers(file) {
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(/(['"])(\.{1,2}\/[^'"\n]*?)\.ts\1/g, '$1$2.js$1');
  if (rewritten !== text) writeFileSync(file, rewritten);
}
