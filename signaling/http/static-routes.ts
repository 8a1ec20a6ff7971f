import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import { build } from 'esbuild';

const CLIENT_ENTRY = fileURLToPath(new URL('../../client/src/index.ts', import.meta.url));
const DEMO_PAGE = fileURLToPath(new URL('../../client/demo/index.html', import.meta.url));
const DEMO_DIR = new URL('../../client/demo/', import.meta.url);
/** The demo page's own modules: plain names only, so no path can leave the folder. */
const DEMO_MODULE = /^[a-z][a-z-]*\.js$/;

/**
 * The demo page at `/` (its modules under `/demo/`) and the browser library at `/client.js`.
 * The bundle is built once per process on first request (esbuild, a few tens of ms) so `npm
 * start` needs no build step.
 */
export function mountStatic(router: Router): void {
  let bundle: Promise<string> | undefined;
  router.get('/client.js', async (ctx) => {
    bundle ??= bundleClient().catch((error: unknown) => {
      bundle = undefined;
      throw error;
    });
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = await bundle;
  });
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

export async function bundleClient(): Promise<string> {
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
