import type Router from '@koa/router';
import { z } from 'zod';
import { SessionId } from '../../session/protocol/common.ts';
import type { ServerContext } from '../context.ts';
import { mintScopedKey } from '../keys/scoped-key.ts';
import { sendHttpError } from './http-error.ts';
import { readJsonBody } from './json-body.ts';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const Body = z.object({ session_id: SessionId });

/** Whether POST /dev/session-key is mounted: DEV_ROUTES=on, or auto while HOST is loopback. */
export function devRoutesEnabled(server: ServerContext): boolean {
  const mode = server.config.DEV_ROUTES;
  return mode === 'on' || (mode === 'auto' && LOOPBACK.has(server.config.HOST));
}

/**
 * Dev only: mints a scoped key for the `dev` account so the demo page works right after
 * `npm start`, with no persistent key to paste. Never enable it on a reachable address.
 */
export function mountDevRoutes(router: Router, server: ServerContext): void {
  router.post('/dev/session-key', async (ctx) => {
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
