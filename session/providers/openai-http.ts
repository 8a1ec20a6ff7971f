/**
 * What the OpenAI-compatible adapters (chat, transcription, speech) share about talking HTTP:
 * which statuses are worth retrying, how an error body reads, and how a stream read is cut
 * short by an AbortSignal.
 */

const MAX_ERROR_DETAIL = 300;

/** `${baseUrl}/${path}` with any trailing slash of the base tolerated. */
export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path}`;
}

export type PostOutcome =
  | { kind: 'response'; response: Response }
  | { kind: 'aborted' }
  | { kind: 'timeout'; timeoutMs: number }
  | { kind: 'failed'; error: unknown };

/**
 * POSTs JSON to an OpenAI-compatible endpoint with a bound on the time to response headers.
 * `controller` is the request's own (aborting it also ends a body still streaming); the caller's
 * abort shows as `aborted`, never as an error.
 */
export async function postJson(options: {
  url: string;
  body: unknown;
  apiKey: string | undefined;
  accept?: string;
  timeoutMs: number;
  controller: AbortController;
  callerSignal: AbortSignal;
  fetchImpl: typeof fetch | undefined;
}): Promise<PostOutcome> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    options.controller.abort();
  }, options.timeoutMs);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.accept) headers.accept = options.accept;
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  try {
    // Resolve fetch at call time so tests (and polyfills) that swap globalThis.fetch still apply.
    const fetchImpl = options.fetchImpl ?? fetch;
    const response = await fetchImpl(options.url, { method: 'POST', headers, body: JSON.stringify(options.body), signal: options.controller.signal });
    return { kind: 'response', response };
  } catch (error) {
    if (options.callerSignal.aborted) return { kind: 'aborted' };
    if (timedOut) return { kind: 'timeout', timeoutMs: options.timeoutMs };
    return { kind: 'failed', error };
  } finally {
    clearTimeout(timer);
  }
}

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** `HTTP <status>: <error.message>` (or the raw body when it is not OpenAI's error JSON). */
export async function describeHttpError(response: Response): Promise<string> {
  let text = '';
  try {
    text = await response.text();
  } catch {
    // The status alone is still worth reporting.
  }
  let detail = text.trim();
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string };
    const message = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message;
    if (typeof message === 'string') detail = message;
  } catch {
    // Not JSON (some local servers answer in plain text): keep the raw body.
  }
  return `HTTP ${response.status}${detail ? `: ${truncate(detail)}` : ''}`;
}

export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // undici hides the useful part (ECONNREFUSED, socket closed) in `cause`.
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return `${err.message}${cause}`;
}

export function truncate(text: string): string {
  return text.length > MAX_ERROR_DETAIL ? `${text.slice(0, MAX_ERROR_DETAIL)}…` : text;
}

/** A pending read that rejects with the signal's reason as soon as the signal aborts. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {}); // the read also fails once the body is aborted; nobody awaits it
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      promise.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
