import type { SpeechToText, TranscriptionStream } from '../../session/providers/asr.ts';
import type { LanguageModel } from '../../session/providers/llm.ts';
import type { WebSearch } from '../../session/providers/search.ts';
import type { TextToSpeech } from '../../session/providers/tts.ts';
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
 * the turn that made it (the active context). The adapters themselves only add the span's
 * `traceparent` to their requests (Tracing.headers).
 */
export function observeLanguageModel(telemetry: Telemetry, llm: LanguageModel): LanguageModel {
  return { name: llm.name, stream: (request) => observedStream(call(telemetry, 'llm', llm.name), () => llm.stream(request), request.signal) };
}

export function observeTextToSpeech(telemetry: Telemetry, tts: TextToSpeech): TextToSpeech {
  return {
    name: tts.name,
    voices: tts.voices,
    synthesize: (text, voice, signal) => observedStream(call(telemetry, 'tts', tts.name), () => tts.synthesize(text, voice, signal), signal),
    ...(tts.close ? { close: () => tts.close!() } : {}),
  };
}

export function observeSpeechToText(telemetry: Telemetry, stt: SpeechToText): SpeechToText {
  return { name: stt.name, open: () => observedTranscription(telemetry, stt), ...(stt.close ? { close: () => stt.close!() } : {}) };
}

export function observeWebSearch(telemetry: Telemetry, search: WebSearch): WebSearch {
  return {
    name: search.name,
    search: async (query, signal) => {
      const c = call(telemetry, 'search', search.name);
      try {
        const results = await c.span.run(() => search.search(query, signal));
        c.end('ok');
        return results;
      } catch (error) {
        c.end(statusOf(error, signal), error);
        throw error;
      }
    },
  };
}

interface Call {
  span: TraceSpan;
  end(status: string, error?: unknown): void;
}

function call(telemetry: Telemetry, kind: Kind, name: string): Call {
  const provider = name.split(':')[0] || 'unknown';
  const started = performance.now();
  const span = telemetry.tracing.active(`parley.${kind}`, { 'parley.provider': name });
  return {
    span,
    end: (status, error) => {
      telemetry.metrics.providerRequest.observe({ provider, kind, status }, (performance.now() - started) / 1000);
      span.end({ 'parley.status': status }, error === undefined || status === 'aborted' ? undefined : error instanceof Error ? error.message : String(error));
    },
  };
}

/** A streamed call (model, synthesis): its span is active around every step of the stream. */
async function* observedStream<T>(c: Call, open: () => AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = c.span.run(() => open()[Symbol.asyncIterator]());
  let done = false;
  let status = 'ok';
  let failure: unknown;
  try {
    for (;;) {
      const next = await c.span.run(() => iterator.next());
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } catch (error) {
    done = true;
    status = statusOf(error, signal);
    failure = error;
    throw error;
  } finally {
    // The consumer stopped early (a barge-in, a finished turn): the provider's stream ends too.
    if (!done) await iterator.return?.();
    if (status === 'ok' && signal.aborted) status = 'aborted';
    c.end(status, failure);
  }
}

/** A recognition is timed from the end of the utterance (finish) to its transcript. */
function observedTranscription(telemetry: Telemetry, stt: SpeechToText): TranscriptionStream {
  const stream = stt.open();
  return {
    write: (samples) => stream.write(samples),
    abort: () => stream.abort(),
    finish: async () => {
      const c = call(telemetry, 'asr', stt.name);
      try {
        const text = await c.span.run(() => stream.finish());
        c.end('ok');
        return text;
      } catch (error) {
        c.end(statusOf(error, undefined), error);
        throw error;
      }
    },
  };
}

/** A bounded label: aborted, the HTTP status of a failed request, timeout, or error. */
function statusOf(error: unknown, signal: AbortSignal | undefined): string {
  if (signal?.aborted) return 'aborted';
  const status = (error as { status?: unknown } | undefined)?.status;
  if (typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599) return String(status);
  const message = error instanceof Error ? error.message : String(error);
  return /time(d)? ?out/i.test(message) ? 'timeout' : 'error';
}
