import { timingSafeEqual } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ServerContext } from '../context.ts';
import { sendHttpError } from '../http/http-error.ts';
import { bearerToken } from '../http/json-body.ts';

/**
 * The operator's endpoints: `/healthz` (liveness: the process answers; 503 while draining, as
 * before), `/readyz` (readiness: 503 while draining or while a configured dependency is
 * unreachable, saying which), `/metrics` (Prometheus text format).
 */
export function mountObservability(router: Router, server: ServerContext): void {
  router.get('/healthz', (ctx) => {
    ctx.status = server.draining ? 503 : 200;
    // `voice` lets the demo page say why voice is off before anyone tries it.
    const voice = server.voice.ok ? { available: true } : { available: false, detail: server.voice.reason };
    ctx.body = { status: server.draining ? 'draining' : 'ok', sessions: server.sessions.size, voice };
  });
  router.get('/readyz', async (ctx) => {
    const report = await server.observability.readiness.report(server.draining);
    ctx.status = report.ready ? 200 : 503;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = report.body;
  });
  router.get('/metrics', async (ctx) => {
    const token = server.config.METRICS_TOKEN;
    if (token !== undefined) {
      if (!sameSecret(bearerToken(ctx.get('authorization') || undefined), token)) {
        return sendHttpError(ctx, 'unauthorized', 'METRICS_TOKEN is set: send it as Authorization: Bearer <token>');
      }
    } else if (!fromLoopback(ctx, server.config.TRUST_PROXY)) {
      return sendHttpError(ctx, 'forbidden', '/metrics answers loopback clients only unless METRICS_TOKEN is set');
    }
    const { registry } = server.observability.metrics;
    ctx.set('Content-Type', registry.contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await registry.metrics();
  });
}

function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A client on this machine. A request a local reverse proxy forwarded is not one: with
 * TRUST_PROXY its forwarded address decides; without it, any forwarding header disqualifies it
 * (else everything behind an nginx on the same host would look local).
 */
function fromLoopback(ctx: Context, trustProxy: boolean): boolean {
  if (!isLoopback(ctx.socket.remoteAddress)) return false;
  if (trustProxy) return isLoopback(ctx.ip);
  return ctx.get('x-forwarded-for') === '' && ctx.get('forwarded') === '' && ctx.get('x-real-ip') === '';
}

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const bare = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIPv4(bare)) return bare.startsWith('127.');
  return isIPv6(bare) && bare === '::1';
}
