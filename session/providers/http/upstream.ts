/**
 * One provider origin over undici: a keep-alive Pool with a bounded number of connections,
 * bodies as Node streams, a first-byte timeout (request sent → response headers, queueing and
 * connecting included), an idle timeout between body chunks (undici's bodyTimeout, from the
 * headers on), and retries of connection failures that happen before any answer. A stream that
 * has started is never retried: its bytes may already have reached the user.
 *
 * Every failure is thrown as the adapter's ProviderError, built from a Failure (failure.ts):
 * our words for the client, the provider's redacted words for the log.
 */
import { Pool, errors as undiciErrors } from 'undici';
import type { Dispatcher } from 'undici';
import { describeError, errorBodyText, isRetryableStatus, redact, type Failure, type FailureKind, type ServiceName } from './failure.ts';
import { errorFromFailure, type ProviderError, type ProviderErrorClass } from '../provider-error.ts';
import { abortableDelay } from '../abortable-delay.ts';
import { BodyHandler, type BodySink } from './body-handler.ts';

export interface UpstreamOptions {
  /** e.g. `https://api.openai.com/v1`; a trailing slash is tolerated. */
  baseUrl: string;
  apiKey?: string | undefined;
  /** Request sent → response headers. */
  firstByteMs: number;
  /** Longest gap between two body chunks (the first included) once headers arrived. */
  idleMs: number;
  /** Connections kept per origin; requests beyond wait in the pool's queue. Default 256. */
  connections?: number;
  /** Retries of a connection that failed before any answer. Default 2. */
  connectRetries?: number;
}

export type UpstreamBody = Dispatcher.ResponseData['body'];

export interface UpstreamRequest {
  method?: 'POST' | 'GET';
  /** Path under the base URL, e.g. `chat/completions`, optionally with a query string. */
  path: string;
  body?: string | Buffer;
  contentType?: string;
  accept?: string;
  /** The caller's cancellation: aborting resolves `undefined` (before headers) or ends the body quietly. */
  signal: AbortSignal;
}

/** Connection failures that leave the request unanswered, so it is safe to send it again. */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const RETRY_BACKOFF_MS = [25, 150];
/**
 * Abort reasons made once: an abort without a reason builds a DOMException with a stack trace
 * (source-mapped under tsx), which profiling showed among the costliest steps of a turn.
 */
const CALLER_ABORTED = Object.freeze(new Error('the caller aborted the request'));
const FIRST_BYTE_TIMEOUT = Object.freeze(new Error('no response headers in time'));
const MAX_ERROR_BODY = 4096;

export class Upstream<E extends ProviderError> {
  private readonly pool: Pool;
  private readonly basePath: string;
  private readonly origin: string;
  /** Each streaming body's link to its caller's signal. */
  private readonly links = new WeakMap<UpstreamBody, () => void>();
  private readonly headerSets = new Map<string, Record<string, string>>();

  constructor(
    readonly service: ServiceName,
    private readonly ErrorKind: ProviderErrorClass<E>,
    private readonly options: UpstreamOptions,
  ) {
    const base = new URL(options.baseUrl);
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/+$/, '');
    this.pool = new Pool(this.origin, {
      connections: options.connections ?? 256,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connect: { timeout: Math.min(options.firstByteMs, 10_000) },
      // Our own first-byte timer covers the headers (queueing included); undici's body timer
      // is the idle timeout.
      headersTimeout: 0,
      bodyTimeout: options.idleMs,
    });
  }

  /** The response, 2xx only; undefined when the caller aborted first. Throws E otherwise. */
  request(req: UpstreamRequest): Promise<UpstreamBody | undefined> {
    return this.retrying(req, (deadline) => this.attempt(req, deadline));
  }

  /**
   * The hot path for streamed answers: the 2xx body goes to `sink` straight from undici's parser
   * (the dispatch API, body-handler.ts), chunk by chunk, with no stream or promise per chunk.
   * Resolves once headers arrived, with the handle that ends the body early; undefined when the
   * caller aborted first. Throws E as `request` does, with the same timeouts and retries. Until
   * the body ends or `release()` is called, the caller's abort ends the body: the sink's `error`
   * then receives `Upstream.CALLER_ABORTED`.
   */
  stream(req: UpstreamRequest, sink: BodySink): Promise<StreamHandle | undefined> {
    return this.retrying(req, (deadline) => this.streamAttempt(req, sink, deadline));
  }

  static readonly CALLER_ABORTED: Error = CALLER_ABORTED;

  /** Sends the request again on connection failures before any answer, within the first-byte deadline. */
  private async retrying<T>(req: UpstreamRequest, attempt: (deadline: number) => Promise<Attempt<T>>): Promise<T | undefined> {
    if (req.signal.aborted) return undefined;
    const deadline = performance.now() + this.options.firstByteMs;
    const retries = this.options.connectRetries ?? 2;
    for (let n = 0; ; n += 1) {
      const outcome = await attempt(deadline);
      if (outcome.kind === 'ok') return outcome.value;
      if (outcome.kind === 'aborted') return undefined;
      const retry = outcome.kind === 'connect' && n < retries && performance.now() + (RETRY_BACKOFF_MS[n] ?? 150) < deadline;
      if (!retry) throw this.fail(outcome.kind === 'connect' ? 'unreachable' : 'timeout', outcome.detail);
      await abortableDelay(RETRY_BACKOFF_MS[n] ?? 150, req.signal);
      if (req.signal.aborted) return undefined;
    }
  }

  private async streamAttempt(req: UpstreamRequest, sink: BodySink, deadline: number): Promise<Attempt<StreamHandle>> {
    const handler = new BodyHandler(sink);
    const onAbort = (): void => handler.abort(CALLER_ABORTED);
    const detach = (): void => req.signal.removeEventListener('abort', onAbort);
    req.signal.addEventListener('abort', onAbort, { once: true });
    handler.onDone = detach;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      handler.abort(FIRST_BYTE_TIMEOUT);
    }, Math.max(0, deadline - performance.now()));
    this.pool.dispatch({ origin: this.origin, path: `${this.basePath}/${req.path}`, method: req.method ?? 'POST', headers: this.headers(req), body: req.body ?? null }, handler);
    const outcome = await handler.outcome;
    clearTimeout(timer);
    if (outcome.kind === 'ok') return { kind: 'ok', value: { abort: (reason) => handler.abort(reason), release: detach } };
    detach();
    if (outcome.kind === 'status') throw this.fail('http', errorBodyText(outcome.text), outcome.status);
    return this.classify(outcome.error, req, timedOut);
  }

  private async attempt(req: UpstreamRequest, deadline: number): Promise<Attempt<UpstreamBody>> {
    // Our own controller: the caller's abort, the first-byte timer and undici's cleanup in one.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(CALLER_ABORTED);
    req.signal.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(FIRST_BYTE_TIMEOUT);
    }, Math.max(0, deadline - performance.now()));
    let streaming = false;
    try {
      const response = await this.pool.request({
        origin: this.origin,
        path: `${this.basePath}/${req.path}`,
        method: req.method ?? 'POST',
        headers: this.headers(req),
        body: req.body ?? null,
        signal: controller.signal,
      });
      if (response.statusCode < 200 || response.statusCode >= 300) throw await this.httpFailure(response);
      // From here the caller's abort ends the body (undici destroys it), until the body closes
      // or the adapter releases it.
      streaming = true;
      const detach = (): void => req.signal.removeEventListener('abort', onAbort);
      response.body.once('close', detach);
      this.links.set(response.body, detach);
      return { kind: 'ok', value: response.body };
    } catch (error) {
      if (isProviderError(error)) throw error;
      return this.classify(error, req, timedOut);
    } finally {
      clearTimeout(timer);
      if (!streaming) req.signal.removeEventListener('abort', onAbort);
    }
  }

  /** Why an attempt got no answer: the caller, the first-byte timer, a retryable connect failure, or E. */
  private classify(error: unknown, req: UpstreamRequest, timedOut: boolean): Attempt<never> {
    if (req.signal.aborted) return { kind: 'aborted' };
    if (timedOut) return { kind: 'timeout', detail: `no response headers within ${this.options.firstByteMs} ms` };
    if (isConnectFailure(error)) return { kind: 'connect', detail: describeError(error) };
    throw this.fail('broken', describeError(error));
  }

  /** Built once per content type and accept pair: the same few header sets on every request. */
  private headers(req: UpstreamRequest): Record<string, string> {
    const key = `${req.contentType ?? ''}\n${req.accept ?? ''}`;
    let headers = this.headerSets.get(key);
    if (headers) return headers;
    headers = {};
    if (req.contentType) headers['content-type'] = req.contentType;
    if (req.accept) headers.accept = req.accept;
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    this.headerSets.set(key, Object.freeze(headers));
    return headers;
  }

  private async httpFailure(response: Dispatcher.ResponseData): Promise<E> {
    let text = '';
    try {
      text = await readCapped(response.body, MAX_ERROR_BODY);
    } catch {
      // The status alone still says what happened.
    }
    const status = response.statusCode;
    return this.fail('http', errorBodyText(text), status);
  }

  /** The adapter's error for a failure of this upstream, redacted for the log. */
  fail(kind: FailureKind, providerText: string, status?: number): E {
    const failure: Failure = {
      kind,
      service: this.service,
      status,
      retryable: status === undefined ? kind !== 'malformed' : isRetryableStatus(status),
      logDetail: redact(providerText, [this.options.apiKey]),
    };
    return errorFromFailure(this.ErrorKind, failure);
  }

  /**
   * The adapter has all it needs from `body`: a later abort of the caller's signal (the turn
   * ending) must not cut the connection, and the rest (a chunked terminator) is read in the
   * background so the connection goes back to the pool.
   */
  release(body: UpstreamBody): void {
    this.links.get(body)?.();
    void body.dump({ limit: 65_536 }).catch(() => {});
  }

  /** What a body read error means: the idle timeout, or a connection that broke. */
  bodyFailure(error: unknown): E {
    if (error instanceof undiciErrors.BodyTimeoutError || (error as { code?: unknown })?.code === 'UND_ERR_BODY_TIMEOUT') {
      return this.fail('stalled', `no data for ${this.options.idleMs} ms`);
    }
    return this.fail('broken', describeError(error));
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

type Attempt<T> = { kind: 'ok'; value: T } | { kind: 'aborted' } | { kind: 'timeout' | 'connect'; detail: string };

/** A streaming body in flight (`Upstream.stream`). */
export interface StreamHandle {
  /** Ends the body now (the consumer stopped early); the sink's `error` receives `reason`. */
  abort(reason: Error): void;
  /** The caller has what it needs: its later abort must no longer cut the connection. */
  release(): void;
}

function isProviderError(error: unknown): boolean {
  return error instanceof Error && 'publicDetail' in error;
}

function isConnectFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 3; e = e.cause, depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECT_CODES.has(code)) return true;
  }
  return false;
}

/** Reads at most `limit` bytes of a body as text (the idle timeout still applies), then drops the rest. */
async function readCapped(body: UpstreamBody, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) break;
    }
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}
