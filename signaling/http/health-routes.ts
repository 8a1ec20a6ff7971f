import type Router from '@koa/router';
import type { ServerContext } from '../context.ts';

/**
 * Liveness and readiness. /healthz says the process serves (503 while draining). /readyz also
 * asks each configured shared store (PostgreSQL, Redis) whether it answers, and is 503 from the
 * moment a drain starts or while a store is unreachable, with a body saying which.
 */
export function mountHealth(router: Router, server: ServerContext): void {
  router.get('/healthz', (ctx) => {
    ctx.status = server.draining ? 503 : 200;
    // `voice` lets the demo page say why voice is off before anyone tries it.
    const voice = server.voice.ok ? { available: true } : { available: false, detail: server.voice.reason };
    ctx.body = { status: server.draining ? 'draining' : 'ok', sessions: server.sessions.size, voice };
  });
  router.get('/readyz', async (ctx) => {
    const results = await Promise.all(server.stores.checks.map(async (c) => [c.name, (await c.check().catch(() => false)) ? 'ok' : 'unreachable'] as const));
    const unreachable = results.filter(([, state]) => state !== 'ok').map(([name]) => name);
    const ready = !server.draining && unreachable.length === 0;
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: server.draining ? 'draining' : ready ? 'ready' : 'unready', checks: Object.fromEntries(results), ...(unreachable.length > 0 ? { unreachable } : {}) };
  });
}
