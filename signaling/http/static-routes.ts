import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';

const CLIENT_ENTRY = fileURLToPath(new URL('../../client/src/index.ts', import.meta.url));
const DEMO_PAGE = fileURLToPath(new URL('../../client/demo/index.html', import.meta.url));
const DEMO_DIR = new URL('../../client/demo/', import.meta.url);
/** The demo page's own modules: plain names only, so no path can leave the folder. */
const DEMO_MODULE = /^[a-z][a-z-]*\.js$/;
/** The package build's bundle (dist/client.js); absent when the server runs from its sources. */
const PREBUILT_BUNDLE = fileURLToPath(new URL('../../client.js', import.meta.url));

/**
 * The browser library at `/client.js`, and the demo page at `/` (its modules under `/demo/`)
 * unless the routes are mounted in a host application (whose `/` is its own). An installed
 * package serves the bundle it was built with; from the sources the bundle is built once per
 * process on first request (esbuild, a few tens of ms), so a development server needs no build.
 */
export function mountStatic(router: Router, options: { demoPage: boolean }): void {
  let bundle: Promise<string> | undefined;
  router.get('/client.js', async (ctx) => {
    bundle ??= clientBundle().catch((error: unknown) => {
      bundle = undefined;
      throw error;
    });
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = await bundle;
  });
  if (!options.demoPage) return;
  router.get('/demo/:file', async (ctx, next) => {
    const file = ctx.params.file ?? '';
    if (!DEMO_MODULE.test(file)) return next();
    let body: string;
    try {
      body = await readFile(fileURLToPath(new URL(file, DEMO_DIR)), 'utf8');
    } catch {
      return next();
    }
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = body;
  });
  router.get('/', async (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = await readFile(DEMO_PAGE, 'utf8');
  });
}

async function clientBundle(): Promise<string> {
  try {
    return await readFile(PREBUILT_BUNDLE, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return bundleClient();
  }
}

export async function bundleClient(): Promise<string> {
  // esbuild is a development dependency: only a server running from its sources gets here.
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [CLIENT_ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    sourcemap: 'inline',
    legalComments: 'none',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error('client bundle produced no output');
  return file.text;
}
