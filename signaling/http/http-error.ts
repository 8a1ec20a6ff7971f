import type { Context } from 'koa';
import { HTTP_ERRORS, type HttpErrorCode } from '../../session/protocol/errors.ts';
import type { AccountLimit } from '../../session/protocol/usage.ts';

/** HTTP error bodies share the error frame's shape: `{code, detail, retryable}`, status and flag from the table. */
export function sendHttpError(ctx: Context, code: HttpErrorCode, detail: string): void {
  const { status, retryable } = HTTP_ERRORS[code];
  ctx.status = status;
  ctx.body = { code, detail, retryable };
}

/** 429 over a per-account limit: Retry-After in whole seconds, the exact wait and the limit in the body. */
export function sendRateLimited(ctx: Context, limit: AccountLimit, retryAfterMs: number, detail: string): void {
  ctx.set('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
  sendHttpError(ctx, 'rate_limited', detail);
  ctx.body = { ...(ctx.body as object), retry_after_ms: retryAfterMs, limit };
}

/** 429 with Retry-After: this address failed too many key checks lately. */
export function refuseAttempts(ctx: Context, waitMs: number): void {
  ctx.set('Retry-After', String(Math.ceil(waitMs / 1000)));
  sendHttpError(ctx, 'too_many_attempts', `too many failed attempts from this address; retry in ${Math.ceil(waitMs / 1000)} s`);
  ctx.body = { ...(ctx.body as object), retry_after_ms: waitMs };
}

/** Seconds a client is told to wait (Retry-After) when a store is unavailable. */
export const RETRY_AFTER_S = 2;

/** 503 store_unavailable with Retry-After: the request can be repeated unchanged. */
export function sendStoreUnavailable(ctx: Context, what: string): void {
  ctx.set('Retry-After', String(RETRY_AFTER_S));
  sendHttpError(ctx, 'store_unavailable', `${what} is unavailable right now; retry in a few seconds`);
}
