import type Router from '@koa/router';
import type { Context } from 'koa';
import type { ServerContext } from '../context.ts';
import { checkKey } from '../keys/credentials.ts';
import { FeedbackQuery, parseQuery, UsageQuery } from './account-query.ts';
import { sendHttpError } from './http-error.ts';
import { bearerToken } from './json-body.ts';

/** Sessions listed at most; the report says `truncated` beyond. */
const SESSION_LIMIT = 1000;
const REPORT_LIMIT = 100;

/**
 * An account reads its own records: GET /api/v1/usage (the ledger's totals, per session and per
 * day) and GET /api/v1/feedback (its stored feedback and client-error reports). A persistent
 * key (Bearer) says which account; nothing of another account is ever in the answer. Checks run
 * in the order a caller can fix them: the key (401), then the query (400, naming the parameter).
 */
export function mountUsageRoutes(router: Router, server: ServerContext): void {
  router.get('/api/v1/usage', async (ctx) => {
    const account = persistentAccount(ctx, server);
    if (account === undefined) return;
    const query = parseQuery(UsageQuery, ctx.query);
    if (!query.ok) return badParameter(ctx, query.parameter, query.detail);
    const { from, to, session_id } = query.value;
    const report = await server.usage.ledger.report({ account, from, to, sessionId: session_id, sessionLimit: SESSION_LIMIT });
    ctx.body = { account, from: from ?? null, to: to ?? null, ...report };
  });

  router.get('/api/v1/feedback', async (ctx) => {
    const account = persistentAccount(ctx, server);
    if (account === undefined) return;
    const query = parseQuery(FeedbackQuery, ctx.query);
    if (!query.ok) return badParameter(ctx, query.parameter, query.detail);
    const { from, to, session_id, kind, limit } = query.value;
    const listed = await server.oneShots.list({ account, from, to, sessionId: session_id, kind, limit: limit ?? REPORT_LIMIT });
    ctx.body = { account, from: from ?? null, to: to ?? null, ...listed };
  });
}

function persistentAccount(ctx: Context, server: ServerContext): string | undefined {
  const token = bearerToken(ctx.get('authorization') || undefined);
  const checked = checkKey(token, { store: server.keys, secret: server.secret });
  if (checked.ok && checked.credential.kind === 'persistent') return checked.credential.account;
  const why = !checked.ok ? checked.reason : 'a scoped key cannot read account records';
  sendHttpError(ctx, 'unauthorized', `a valid persistent key is required in Authorization: Bearer (${why})`);
  return undefined;
}

function badParameter(ctx: Context, parameter: string, detail: string): void {
  sendHttpError(ctx, 'invalid_parameter', detail);
  ctx.body = { ...(ctx.body as object), parameter };
}
