/**
 * What the OpenAI-compatible adapters (chat, transcription, speech) share about talking HTTP:
 * which statuses are worth retrying, how an error body reads, and how a stream read is cut
 * short by an AbortSignal.
 */

const MAX_ERROR_DETAIL = 300;

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
