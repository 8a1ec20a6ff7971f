/**
 * How a provider call failed, in two voices: `publicDetail` is ours and is all a client ever
 * sees; `logDetail` carries what the provider said, for the operator, with URLs, host names and
 * keys removed (a provider's 401 body echoes the masked key and its own URLs, a proxy's 502 page
 * names internal hosts).
 */

/** The provider kinds, as a client reads them in an error detail. */
export type ServiceName = 'the model' | 'speech recognition' | 'speech synthesis' | 'web search';

export type FailureKind =
  /** No response headers within the first-byte timeout. */
  | 'timeout'
  /** The response started, then no byte arrived within the idle timeout. */
  | 'stalled'
  /** Could not connect (refused, reset before an answer, unknown host), after the retries. */
  | 'unreachable'
  /** A non-2xx status. */
  | 'http'
  /** The connection broke while the answer streamed in. */
  | 'broken'
  /** The answer does not follow the wire format. */
  | 'malformed'
  /** The stream ended before its end marker. */
  | 'ended_early'
  /** The provider reported an error inside a stream that had started well. */
  | 'upstream_error';

export interface Failure {
  kind: FailureKind;
  service: ServiceName;
  retryable: boolean;
  status?: number;
  /** Redacted provider text for the log; never sent to a client. */
  logDetail: string;
}

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Our own words for a failure: no provider text, no URL, no key. */
export function publicDetail(failure: Pick<Failure, 'kind' | 'service' | 'status'>): string {
  const s = failure.service;
  switch (failure.kind) {
    case 'timeout':
      return `${s} did not answer in time`;
    case 'stalled':
      return `${s} stopped sending mid-answer`;
    case 'unreachable':
      return `${s} could not be reached`;
    case 'http':
      return `${s} refused the request: ${statusWords(failure.status ?? 0)} (HTTP ${failure.status ?? 0})`;
    case 'broken':
      return `the connection to ${s} broke mid-answer`;
    case 'malformed':
      return `${s} sent an answer that could not be read`;
    case 'ended_early':
      return `${s} ended its answer early`;
    case 'upstream_error':
      return `${s} reported an error mid-answer`;
  }
}

function statusWords(status: number): string {
  if (status === 401 || status === 403) return 'credentials not accepted';
  if (status === 404) return 'endpoint or model not found';
  if (status === 408) return 'request timed out';
  if (status === 413) return 'request too large';
  if (status === 429) return 'rate limited';
  if (status >= 500) return 'provider failure';
  return 'request not accepted';
}

const MAX_LOG_DETAIL = 300;

/**
 * Removes what must not reach a log: the configured keys (whole, or any 8+ character run of
 * them, which covers masked forms such as `sk-abc***xyz`), bearer tokens, key-shaped tokens,
 * URLs and host:port pairs. Truncates to a few hundred characters.
 */
export function redact(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret) continue;
    out = out.split(secret).join('[key]');
    for (let i = 0; i + 8 <= secret.length; i += 4) out = out.split(secret.slice(i, i + 8)).join('[key]');
  }
  out = out
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, '[url]')
    .replace(/\bbearer\s+[^\s"',]+/gi, 'Bearer [key]')
    // sk-…, pk_…, masked keys with asterisks, long opaque tokens.
    .replace(/\b(?:sk|pk|rk|ak|key)[-_][A-Za-z0-9_*.-]{3,}/gi, '[key]')
    .replace(/[A-Za-z0-9_-]*\*{3,}[A-Za-z0-9_-]*/g, '[key]')
    .replace(/\b[A-Za-z0-9_-]{32,}\b/g, '[key]')
    .replace(/\b(?:[a-z0-9-]+\.)+[a-z0-9-]+:\d{1,5}\b/gi, '[host]')
    .replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g, '[host]');
  return out.length > MAX_LOG_DETAIL ? `${out.slice(0, MAX_LOG_DETAIL)}…` : out;
}

/** The provider's own message from an error body: OpenAI's `{error:{message}}`, else the raw text. */
export function errorBodyText(body: string): string {
  const trimmed = body.trim();
  try {
    const parsed = JSON.parse(trimmed) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    const message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message ?? parsed.detail);
    if (typeof message === 'string') return message;
  } catch {
    // Not JSON (proxies and some local servers answer in plain text or HTML): the raw text.
  }
  return trimmed;
}

/** What an exception says, with the cause that undici puts the useful part in (ECONNREFUSED...). */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return `${err.message}${typeof code === 'string' ? ` [${code}]` : ''}${cause}`;
}
