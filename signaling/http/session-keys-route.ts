import type Router from '@koa/router';
import { z } from 'zod';
import { SessionId } from '../../session/protocol/common.ts';
import { SESSION_ID_PATTERN } from '../../session/protocol/limits.ts';
import type { ServerContext } from '../context.ts';
import { checkKey } from '../keys/credentials.ts';
import { mintScopedKey } from '../keys/scoped-key.ts';
import { StoreUnavailableError } from '../stores/unavailable.ts';
import { refuseAttempts, sendHttpError, sendRateLimited, sendStoreUnavailable } from './http-error.ts';
import { bearerToken, readJsonBody } from './json-body.ts';

const Body = z.object({ session_id: SessionId });

/**
 * POST /api/v1/session-keys. Checks run in the order a caller can fix them: who you are (401,
 * or 429 after too many failed keys from one address), whether the account may now (429 over
 * KEY_EXCHANGES_PER_MINUTE, 402 without credit), what you sent (415), what it says (400).
 * A key database that cannot answer is a 503 with Retry-After, never a 401.
 */
export function mountSessionKeys(router: Router, server: ServerContext): void {
  router.post('/api/v1/session-keys', async (ctx) => {
    if (server.draining) return sendHttpError(ctx, 'server_restarting', 'the server is restarting; retry shortly');
    const waitMs = await server.attempts.refusedFor(ctx.ip);
    if (waitMs !== undefined) return refuseAttempts(ctx, waitMs);
    const token = bearerToken(ctx.get('authorization') || undefined);
    let checked;
    try {
      checked = await checkKey(token, { store: server.stores.keys, secret: server.secret });
    } catch (error) {
      if (error instanceof StoreUnavailableError) return sendStoreUnavailable(ctx, 'the key database');
      throw error;
    }
    if (!checked.ok || checked.credential.kind !== 'persistent') {
      const why = !checked.ok ? checked.reason : 'scoped keys cannot mint keys';
      if (token !== undefined) await server.attempts.failed(ctx.ip, 'key', why, token);
      return sendHttpError(ctx, 'unauthorized', `a valid persistent key is required in Authorization: Bearer (${why})`);
    }
    const account = checked.credential.account;
    try {
      const verdict = await server.usage.limits.consume(account, 'key_exchanges_per_minute');
      if (!verdict.ok) return sendRateLimited(ctx, verdict.limit, verdict.retryAfterMs, verdict.detail);
      const balance = await server.usage.credit.balance(account, true);
      if (balance !== null && balance <= 0) return sendHttpError(ctx, 'credit_exhausted', 'the account has no credit left; top it up first');
    } catch (error) {
      // As a session start: never refused on a guess; enforcement resumes once the store answers.
      if (!(error instanceof StoreUnavailableError)) throw error;
      server.log.warn({ err: error.message, account }, 'credit and limits unreadable: key exchange admitted');
    }
    const body = await readJsonBody(ctx, 16 * 1024);
    if (!body.ok) return sendHttpError(ctx, body.code, body.detail);
    const parsed = Body.safeParse(body.value);
    if (!parsed.success) {
      return sendHttpError(ctx, 'invalid_session_id', `session_id is required: 1 to 64 characters matching ${SESSION_ID_PATTERN.source}`);
    }
    const { credential } = checked;
    const minted = mintScopedKey(server.secret, {
      account: credential.account,
      sessionId: parsed.data.session_id,
      keyId: credential.keyId,
      ttlS: server.config.SCOPED_KEY_TTL_S,
    });
    server.log.info({ account: credential.account, session_id: parsed.data.session_id, key_id: credential.keyId }, 'scoped key issued');
    ctx.status = 201;
    ctx.body = { api_key: minted.apiKey, session_id: parsed.data.session_id, expires_in: minted.expiresIn };
  });
}
