import type { Context } from 'koa';
import { parseBoundedJson } from '../../session/protocol/bounded-json.ts';

export type JsonBodyResult =
  | { ok: true; value: unknown }
  | { ok: false; code: 'not_json' | 'payload_too_large' | 'invalid_request'; detail: string };

/**
 * Reads a small JSON request body. A missing or non-JSON content type and an unparsable body
 * are both "not JSON" (415); a body over the limit is refused before it is buffered whole, and
 * one nested past the JSON depth bound is an invalid request (400).
 */
export async function readJsonBody(ctx: Context, limitBytes: number): Promise<JsonBodyResult> {
  if (!ctx.is('application/json', 'application/*+json')) {
    return { ok: false, code: 'not_json', detail: 'Content-Type must be application/json' };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limitBytes) return { ok: false, code: 'payload_too_large', detail: `body exceeds ${limitBytes} bytes` };
    chunks.push(buffer);
  }
  const parsed = parseBoundedJson(Buffer.concat(chunks).toString('utf8'));
  if (parsed.ok) return { ok: true, value: parsed.value };
  return parsed.reason === 'not_json'
    ? { ok: false, code: 'not_json', detail: 'body is not valid JSON' }
    : { ok: false, code: 'invalid_request', detail: `body is ${parsed.detail}` };
}

export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
