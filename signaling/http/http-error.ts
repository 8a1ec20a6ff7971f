import type { Context } from 'koa';
import { HTTP_ERRORS, type HttpErrorCode } from '../../session/protocol/errors.ts';
import type { AccountLimit } from '../../session/protocol/usage.ts';

/** HTTP error bodies share the error frame's shape: `{code, detail, retryable}`. */
export function sendHttpError(ctx: Context, code: HttpErrorCode, detail: string, retryable = false): void {
  ctx.status = HTTP_ERRORS[code];
  ctx.body = { code, detail, retryable };
}

/** 429 over a per-account limit: Retry-After in whole seconds, the exact wait and the limit in the body. */
export function sendRateLimited(ctx: Context, limit: AccountLimit, retryAfterMs: number, detail: string): void {
  ctx.set('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
  sendHttpError(ctx, 'rate_limited', detail, true);
  ctx.body = { ...(ctx.body as object), retry_after_ms: retryAfterMs, limit };
}
