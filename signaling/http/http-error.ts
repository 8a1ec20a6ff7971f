import type { Context } from 'koa';
import { HTTP_ERRORS, type HttpErrorCode } from '../../session/protocol/errors.ts';

/** HTTP error bodies share the error frame's shape: `{code, detail, retryable}`, status and flag from the table. */
export function sendHttpError(ctx: Context, code: HttpErrorCode, detail: string): void {
  const { status, retryable } = HTTP_ERRORS[code];
  ctx.status = status;
  ctx.body = { code, detail, retryable };
}
