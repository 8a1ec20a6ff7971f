import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { SessionId } from '../../session/protocol/common.ts';
import type { ServerContext } from '../context.ts';
import { mintScopedKey } from '../keys/scoped-key.ts';
import { sendHttpError } from './http-error.ts';
import { readJsonBody } from './json-body.ts';
import { isLoopbackAddress, loopbackRequestProblem } from './loopback-request.ts';

const Body = z.object({ session_id: SessionId });

/** Whether POST /dev/session-key is mounted: only when asked for (DEV_ROUTES=on, or auto on a loopback HOST). */
export function devRoutesEnabled(server: ServerContext): boolean {
  const mode = server.config.DEV_ROUTES;
  return mode === 'on' || (mode === 'auto' && isLoopbackAddress(server.config.HOST));
}

/**
 * Dev only: mints a scoped key for the `dev` account so the demo page works with no persistent
 * key to paste. It answers a page served from this machine only: a loopback peer, a loopback
 * `Host` (a DNS-rebinding page names its own host), a loopback `Origin` when there is one, and no
 * proxy headers (a reverse proxy on the same host would make every visitor a loopback peer).
 */
export function mountDevRoutes(router: Router, server: ServerContext): void {
  router.post('/dev/session-key', async (ctx: Context) => {
    const problem = loopbackRequestProblem(ctx.req);
    if (problem) {
      server.log.warn({ remote: ctx.req.socket.remoteAddress, host: ctx.get('host').slice(0, 128), origin: ctx.get('origin').slice(0, 128) }, `dev key route refused: ${problem}`);
      return sendHttpError(ctx, 'forbidden_origin', `the dev key route answers pages on this machine only (${problem})`);
    }
    const body = await readJsonBody(ctx, 4096);
    if (!body.ok) return sendHttpError(ctx, body.code, body.detail);
    const parsed = Body.safeParse(body.value);
    if (!parsed.success) return sendHttpError(ctx, 'invalid_session_id', 'session_id is required and must match the SPEC pattern');
    const minted = mintScopedKey(server.secret, {
      account: 'dev',
      sessionId: parsed.data.session_id,
      keyId: 'dev',
      ttlS: server.config.SCOPED_KEY_TTL_S,
    });
    ctx.status = 201;
    ctx.body = { api_key: minted.apiKey, session_id: parsed.data.session_id, expires_in: minted.expiresIn };
  });
}
