import type { IncomingMessage } from 'node:http';

/** Why an upgrade request is refused before any socket is accepted, as an HTTP answer. */
export interface UpgradeRefusal {
  status: 400 | 403 | 404;
  code: 'invalid_request' | 'forbidden_origin' | 'not_found';
  detail: string;
}

/**
 * The request target's path, read without URL parsing: a target such as `//x:99999/ws` is not a
 * valid URL at all, and a client must never be able to make the server throw before it answers.
 */
export function requestPath(target: string | undefined): string {
  const raw = target ?? '/';
  const end = raw.search(/[?#]/);
  return end === -1 ? raw : raw.slice(0, end);
}

/**
 * Checks an upgrade request's target and, when ALLOWED_ORIGINS is set, its `Origin`: a browser
 * always sends one, so a page from an origin not on the list cannot open a conversation with
 * credentials it obtained elsewhere. Requests without an Origin (servers, native apps) pass.
 */
export function checkUpgrade(req: IncomingMessage, allowedOrigins: ReadonlySet<string> | undefined): UpgradeRefusal | undefined {
  if (requestPath(req.url) !== '/ws') return { status: 404, code: 'not_found', detail: 'the conversation endpoint is /ws' };
  const origin = req.headers.origin;
  if (allowedOrigins && origin !== undefined && !allowedOrigins.has(origin.toLowerCase())) {
    return { status: 403, code: 'forbidden_origin', detail: 'this Origin is not in the server\'s ALLOWED_ORIGINS' };
  }
  return undefined;
}
