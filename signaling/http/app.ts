import Koa from 'koa';
import Router from '@koa/router';
import type { ServerContext } from '../context.ts';
import { sendHttpError } from './http-error.ts';
import { devRoutesEnabled, mountDevRoutes } from './dev-routes.ts';
import { isLoopbackAddress } from './loopback-request.ts';
import { mountSessionKeys } from './session-keys-route.ts';
import { mountStatic } from './static-routes.ts';
import { mountUsageRoutes } from './usage-routes.ts';
import { mountObservability } from '../observability/routes.ts';

/** The HTTP side: session keys, health, readiness and metrics, the demo page and the client bundle. */
export function createHttpApp(server: ServerContext): Koa {
  const app = new Koa({ proxy: server.config.TRUST_PROXY });
  const router = createRouter(server, { demoPage: true });

  // Errors koa meets outside a handler (a client that breaks HTTP mid-request) go to our log,
  // not to stderr.
  app.silent = true;
  app.on('error', (error: Error) => server.log.debug({ err: error.message }, 'http connection error'));

  app.use(async (ctx, next) => {
    // A request target that is no URL (e.g. `//x:99999/`) makes every later ctx.path throw.
    if (!hasPath(ctx)) return sendHttpError(ctx, 'invalid_request', 'the request target is not a valid path');
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) sendHttpError(ctx, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
        else if (ctx.status === 405) sendHttpError(ctx, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`);
      }
    } catch (error) {
      failed(server, ctx, error);
    }
  });
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  return app;
}

/**
 * The same routes as middleware for a host application's Koa app: a request none of them
 * matches goes on to the host's next middleware, untouched; errors of our routes are answered
 * here, the host's own errors stay the host's.
 */
export function createMountedRoutes(server: ServerContext, options: { demoPage: boolean }): Koa.Middleware {
  const router = createRouter(server, options);
  // Typed for a router-extended context; app.use(router.routes()) hands it the very same ctx.
  const routes = router.routes() as unknown as Koa.Middleware;
  const methods = router.allowedMethods({ throw: false }) as unknown as Koa.Middleware;
  return async (ctx, next) => {
    // A target that is no URL is the host's to answer: none of our routes can match it.
    if (!hasPath(ctx)) return next();
    let passedOn = false;
    try {
      await routes(ctx, () => methods(ctx, () => ((passedOn = true), next())));
    } catch (error) {
      if (passedOn) throw error;
      failed(server, ctx, error);
    }
  };
}

function createRouter(server: ServerContext, options: { demoPage: boolean }): Router {
  const router = new Router();
  mountObservability(router, server);
  mountSessionKeys(router, server);
  mountUsageRoutes(router, server);
  if (devRoutesEnabled(server)) {
    mountDevRoutes(router, server);
    if (!isLoopbackAddress(server.config.HOST)) server.log.warn({ host: server.config.HOST }, 'DEV_ROUTES is on while listening beyond loopback: the dev key route still answers only pages on this machine');
  }
  mountStatic(router, options);
  return router;
}

function failed(server: ServerContext, ctx: Koa.Context, error: unknown): void {
  server.log.error({ err: error instanceof Error ? error.stack : String(error), url: ctx.url.slice(0, 256) }, 'http handler failed');
  sendHttpError(ctx, 'internal_error', 'internal error');
}

function hasPath(ctx: Koa.Context): boolean {
  try {
    return typeof ctx.path === 'string';
  } catch {
    return false;
  }
}
