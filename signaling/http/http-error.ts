import type { Context } from 'koa';
import { HTTP_ERRORS, type HttpErrorCode } from '../../session/protocol/errors.ts';

/** HTTP error bodies share the error frame's shape: `{code, detail, retryable}`. */
export function sendHttpError(ctx: Context, code: HttpErrorCode, detail: string, retryable = false): void {
  ctx.status = HTTP_ERRORS[code];
  ctx.body = { code, detail, retryable };
}
