import type { Context } from 'koa';
import { HTTP_ERRORS, type HttpErrorCode } from '../../session/protocol/errors.ts';

/** HTTP error bodies share the error frame's shape: `{code, detail, retryable}`, status and flag from the table. */
export function sendHttpError(ctx: Context, code: HttpErrorCode, detail: string): void {
  const { status, retryable } = HTTP_ERRORS[code];
  ctx.status = status;
  ctx.body = { code, detail, retryable };
}

/** 429 with Retry-After: this address failed too many key checks lately. */
export function refuseAttempts(ctx: Context, waitMs: number): void {
  ctx.set('Retry-After', String(Math.ceil(waitMs / 1000)));
  sendHttpError(ctx, 'too_many_attempts', `too many failed attempts from this address; retry in ${Math.ceil(waitMs / 1000)} s`);
  ctx.body = { ...(ctx.body as object), retry_after_ms: waitMs };
}
