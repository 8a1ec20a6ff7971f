import type { SpeechToText, TranscriptionStream } from '../../session/providers/asr.ts';
import type { LanguageModel } from '../../session/providers/llm.ts';
import type { WebSearch } from '../../session/providers/search.ts';
import type { TextToSpeech } from '../../session/providers/tts.ts';
import type { HistogramSeries } from './metric-families.ts';
import type { ParleyMetrics } from './metrics.ts';
import type { TraceSpan, Tracing } from './tracing.ts';

type Kind = 'llm' | 'asr' | 'tts' | 'search';

interface Telemetry {
  metrics: ParleyMetrics;
  tracing: Tracing;
}

/**
 * The provider ports, measured: every call is timed from request to its last byte into
 * `parley_provider_request_seconds{provider,kind,status}` and, with tracing on, is a span under
 * the turn that made it (the active context), whose `traceparent` reaches the provider
 * (trace-propagation.ts). Per-call objects are classes, not closures: under tsx every named
 * closure costs a defineProperty, which showed in a typed turn's profile.
 */
export function observeLanguageModel(telemetry: Telemetry, llm: LanguageModel): LanguageModel {
  const kind = new CallKind(telemetry, 'llm', llm.name);
  return { name: llm.name, stream: (request) => new ObservedStream(kind.start(), () => llm.stream(request), request.signal) };
}

export function observeTextToSpeech(telemetry: Telemetry, tts: TextToSpeech): TextToSpeech {
  const kind = new CallKind(telemetry, 'tts', tts.name);
  return {
    name: tts.name,
    voices: tts.voices,
    synthesize: (text, voice, signal) => new ObservedStream(kind.start(), () => tts.synthesize(text, voice, signal), signal),
    ...(tts.close ? { close: () => tts.close!() } : {}),
  };
}

export function observeSpeechToText(telemetry: Telemetry, stt: SpeechToText): SpeechToText {
  const kind = new CallKind(telemetry, 'asr', stt.name);
  // partials passes through: the lexical end-of-turn cue is on only for recognisers that have them.
  return {
    name: stt.name,
    ...(stt.partials ? { partials: true } : {}),
    open: () => observeTranscription(kind, stt.open()),
    ...(stt.close ? { close: () => stt.close!() } : {}),
  };
}

export function observeWebSearch(telemetry: Telemetry, search: WebSearch): WebSearch {
  const kind = new CallKind(telemetry, 'search', search.name);
  return {
    name: search.name,
    search: async (query, signal) => {
      const call = kind.start();
      try {
        const results = await call.span.run(() => search.search(query, signal));
        call.end('ok');
        return results;
      } catch (error) {
        call.end(statusOf(error, signal), error);
        throw error;
      }
    },
  };
}

/** One provider and kind: its spans' name and attributes, its histogram series by status. */
class CallKind {
  readonly provider: string;
  private readonly byStatus = new Map<string, HistogramSeries>();

  constructor(
    readonly telemetry: Telemetry,
    readonly kind: Kind,
    readonly name: string,
  ) {
    this.provider = name.split(':')[0] || 'unknown';
  }

  start(): Call {
    return new Call(this, this.telemetry.tracing.active(`parley.${this.kind}`, { 'parley.provider': this.name }));
  }

  series(status: string): HistogramSeries {
    let series = this.byStatus.get(status);
    if (!series) {
      series = this.telemetry.metrics.providerRequest.of(this.provider, this.kind, status);
      this.byStatus.set(status, series);
    }
    return series;
  }
}

class Call {
  private readonly started = performance.now();
  private ended = false;

  constructor(
    private readonly kind: CallKind,
    readonly span: TraceSpan,
  ) {}

  end(status: string, error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.kind.series(status).record(performance.now() - this.started);
    this.span.end({ 'parley.status': status }, error === undefined || status === 'aborted' ? undefined : error instanceof Error ? error.message : String(error));
  }
}

/**
 * A streamed call (model, synthesis): its span is active around every step of the stream, and it
 * ends with the stream (done, failed, or the consumer stopping early).
 */
class ObservedStream<T> implements AsyncIterable<T>, AsyncIterator<T> {
  private inner: AsyncIterator<T> | undefined;
  private readonly stepped = (result: IteratorResult<T>): IteratorResult<T> => {
    if (result.done) this.end('ok');
    return result;
  };
  private readonly failed = (error: unknown): never => {
    this.end(statusOf(error, this.signal), error);
    throw error;
  };

  constructor(
    private readonly call: Call,
    private readonly open: () => AsyncIterable<T>,
    private readonly signal: AbortSignal,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<T> {
    this.inner ??= this.call.span.run(() => this.open()[Symbol.asyncIterator]());
    return this;
  }

  next(): Promise<IteratorResult<T>> {
    const inner = this.inner!;
    const step = this.call.span.traced ? this.call.span.run(() => inner.next()) : inner.next();
    return step.then(this.stepped, this.failed);
  }

  /** The consumer stopped early (a barge-in, a finished turn): the provider's stream ends too. */
  async return(value?: unknown): Promise<IteratorResult<T>> {
    this.end('ok');
    return (await this.inner?.return?.(value)) ?? { done: true, value: undefined };
  }

  private end(status: string, error?: unknown): void {
    this.call.end(status === 'ok' && this.signal.aborted ? 'aborted' : status, error);
  }
}

/**
 * A recognition is timed from the end of the utterance (finish) to its transcript. Only finish is
 * replaced, on the stream itself: every other method it has (partial, lastWordPosterior,
 * sentenceEndProbability, whatever a recogniser adds) stays as it is. A wrapper that listed
 * them dropped the end-of-turn rules that read them, silently, twice.
 */
function observeTranscription(kind: CallKind, stream: TranscriptionStream): TranscriptionStream {
  const finish = stream.finish.bind(stream);
  stream.finish = async () => {
    const call = kind.start();
    try {
      const text = await call.span.run(finish);
      call.end('ok');
      return text;
    } catch (error) {
      call.end(statusOf(error, undefined), error);
      throw error;
    }
  };
  return stream;
}

/** How an adapter's ProviderError names its failure (session/providers/http/failure.ts) in its message. */
const FAILURE_KINDS = ['timeout', 'stalled', 'unreachable', 'broken', 'malformed', 'ended_early', 'upstream_error'] as const;

/** A bounded label: aborted, the HTTP status of a refused request, the adapter's failure kind, or error. */
export function statusOf(error: unknown, signal: AbortSignal | undefined): string {
  if (signal?.aborted) return 'aborted';
  const status = (error as { status?: unknown } | undefined)?.status;
  if (typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599) return String(status);
  const message = error instanceof Error ? error.message : String(error);
  return FAILURE_KINDS.find((kind) => message.includes(`: ${kind}`)) ?? (/timed out/i.test(message) ? 'timeout' : 'error');
}
