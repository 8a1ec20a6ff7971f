import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ServerContext } from '../context.ts';
import { checkKey } from '../keys/credentials.ts';
import { FeedbackQuery, parseQuery, UsageQuery } from './account-query.ts';
import { StoreUnavailableError } from '../stores/unavailable.ts';
import { refuseAttempts, sendHttpError, sendStoreUnavailable } from './http-error.ts';
import { bearerToken } from './json-body.ts';

/** Sessions listed at most; the report says `truncated` beyond. */
const SESSION_LIMIT = 1000;
const REPORT_LIMIT = 100;

/**
 * An account reads its own records: GET /api/v1/usage (the ledger's totals, per session and per
 * day) and GET /api/v1/feedback (its stored feedback and client-error reports). A persistent
 * key (Bearer) says which account; nothing of another account is ever in the answer. Checks run
 * in the order a caller can fix them: the key (401, or 429 after too many failed keys from one
 * address), then the query (400, naming the parameter). A store that cannot answer is a 503 with
 * Retry-After.
 */
export function mountUsageRoutes(router: Router, server: ServerContext): void {
  router.get('/api/v1/usage', async (ctx) => {
    const account = await persistentAccount(ctx, server);
    if (account === undefined) return;
    const query = parseQuery(UsageQuery, ctx.query);
    if (!query.ok) return badParameter(ctx, query.parameter, query.detail);
    const { from, to, session_id } = query.value;
    const report = await orUnavailable(ctx, 'the usage ledger', () => server.stores.ledger.report({ account, from, to, sessionId: session_id, sessionLimit: SESSION_LIMIT }));
    if (report) ctx.body = { account, from: from ?? null, to: to ?? null, ...report };
  });

  router.get('/api/v1/feedback', async (ctx) => {
    const account = await persistentAccount(ctx, server);
    if (account === undefined) return;
    const query = parseQuery(FeedbackQuery, ctx.query);
    if (!query.ok) return badParameter(ctx, query.parameter, query.detail);
    const { from, to, session_id, kind, limit } = query.value;
    const listed = await orUnavailable(ctx, 'the report store', () => server.stores.reports.list({ account, from, to, sessionId: session_id, kind, limit: limit ?? REPORT_LIMIT }));
    if (listed) ctx.body = { account, from: from ?? null, to: to ?? null, ...listed };
  });
}

async function persistentAccount(ctx: Context, server: ServerContext): Promise<string | undefined> {
  const waitMs = await server.attempts.refusedFor(ctx.ip);
  if (waitMs !== undefined) return void refuseAttempts(ctx, waitMs);
  const token = bearerToken(ctx.get('authorization') || undefined);
  const checked = await orUnavailable(ctx, 'the key database', () => checkKey(token, { store: server.stores.keys, secret: server.secret }));
  if (!checked) return undefined;
  if (checked.ok && checked.credential.kind === 'persistent') return checked.credential.account;
  const why = !checked.ok ? checked.reason : 'a scoped key cannot read account records';
  if (token !== undefined) await server.attempts.failed(ctx.ip, 'key', why, token);
  sendHttpError(ctx, 'unauthorized', `a valid persistent key is required in Authorization: Bearer (${why})`);
  return undefined;
}

/** The store's answer, or undefined once a 503 was sent because it could not answer. */
async function orUnavailable<T>(ctx: Context, what: string, read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    sendStoreUnavailable(ctx, what);
    return undefined;
  }
}

function badParameter(ctx: Context, parameter: string, detail: string): void {
  sendHttpError(ctx, 'invalid_parameter', detail);
  ctx.body = { ...(ctx.body as object), parameter };
}
