/**
 * One streamed request on undici's `dispatch` API: the response body goes straight from the
 * HTTP parser to the caller's `BodySink` callbacks, with no Node stream, no async iterator and
 * no promise per chunk in between (what `request()` adds for every read). The one promise is
 * `outcome`, which settles once per attempt: headers of a 2xx (the body then flows to the sink),
 * or why there is no body (a non-2xx with its first bytes, an abort, a failure before headers).
 */
import type { Dispatcher } from 'undici';

/** Receives a 2xx body. Called synchronously from undici's parser: no throwing. */
export interface BodySink {
  data(chunk: Buffer): void;
  /** The body ended (the request completed). */
  end(): void;
  /** The body broke after it had started (idle timeout, reset), or was aborted: `error` is the reason. */
  error(error: Error): void;
}

export type HeadersOutcome =
  | { kind: 'ok' }
  | { kind: 'status'; status: number; text: string }
  | { kind: 'failed'; error: Error };

const MAX_ERROR_BODY = 4096;

export class BodyHandler implements Dispatcher.DispatchHandler {
  readonly outcome: Promise<HeadersOutcome>;
  /** Called once when the request is over, however it ended. */
  onDone: (() => void) | undefined;
  private settle!: (outcome: HeadersOutcome) => void;
  private controller: Dispatcher.DispatchController | undefined;
  private abortReason: Error | undefined;
  /** 0 until headers; then the status. */
  private status = 0;
  private errorBody: Buffer[] | undefined;
  private errorBytes = 0;
  private finished = false;

  constructor(private readonly sink: BodySink) {
    this.outcome = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  /** Ends the request at any point (queued, sending, streaming); the sink or outcome gets `reason`. */
  abort(reason: Error): void {
    if (this.finished || this.abortReason) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortReason) controller.abort(this.abortReason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    if (statusCode < 200) return; // informational (103 Early Hints): the real answer follows
    this.status = statusCode;
    if (statusCode >= 200 && statusCode < 300) this.settle({ kind: 'ok' });
    else this.errorBody = [];
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.errorBody === undefined) {
      this.sink.data(chunk);
      return;
    }
    // An error page: its first few KB say why; the rest is not read.
    this.errorBody.push(Buffer.from(chunk));
    this.errorBytes += chunk.length;
    if (this.errorBytes >= MAX_ERROR_BODY) {
      this.finish();
      this.settleStatus();
      controller.abort(new Error('error body read'));
    }
  }

  onResponseEnd(): void {
    if (this.finished) return;
    this.finish();
    if (this.errorBody !== undefined) {
      this.settleStatus();
      return;
    }
    this.sink.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.finished) return;
    this.finish();
    const reason = this.abortReason ?? error;
    if (this.status >= 200 && this.status < 300) this.sink.error(reason);
    else if (this.errorBody !== undefined) this.settleStatus();
    else this.settle({ kind: 'failed', error: reason });
  }

  private finish(): void {
    this.finished = true;
    this.onDone?.();
  }

  private settleStatus(): void {
    const text = Buffer.concat(this.errorBody ?? []).subarray(0, MAX_ERROR_BODY).toString('utf8');
    this.settle({ kind: 'status', status: this.status, text });
  }
}
