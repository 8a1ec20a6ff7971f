import { describe, expect, it } from 'vitest';
import type { LanguageModel, ModelEvent, ModelRequest } from '../../session/providers/llm.ts';
import { errorFromFailure, ProviderError } from '../../session/providers/provider-error.ts';
import { parleyMetrics } from './metrics.ts';
import type { SpeechToText, TranscriptionStream } from '../../session/providers/asr.ts';
import { observeLanguageModel, observeSpeechToText, statusOf } from './provider-telemetry.ts';
import { Tracing } from './tracing.ts';

const telemetry = { metrics: parleyMetrics(), tracing: new Tracing({ endpoint: undefined, headers: {}, serviceName: 'test' }) };
const request = (signal = new AbortController().signal): ModelRequest => ({ messages: [], tools: [], toolChoice: 'auto', signal });
const calls = (status: string): number => telemetry.metrics.providerRequest.of('fake', 'llm', status).total.count;

/** A model whose stream yields `events`, then throws `error` if given; it records whether it was closed early. */
function model(events: ModelEvent[], error?: Error): LanguageModel & { closed: boolean } {
  const m = {
    name: 'fake:model-1',
    closed: false,
    async *stream(): AsyncGenerator<ModelEvent> {
      try {
        for (const e of events) yield e;
        if (error) throw error;
      } finally {
        m.closed = true;
      }
    },
  };
  return m;
}

describe('provider telemetry', () => {
  it('names a failure by a bounded status: aborted, the HTTP status, the adapter\'s failure kind, or error', () => {
    const aborted = new AbortController();
    aborted.abort();
    expect(statusOf(new Error('anything'), aborted.signal)).toBe('aborted');
    expect(statusOf(errorFromFailure(ProviderError, { kind: 'http', service: 'the model', retryable: true, status: 429, logDetail: 'slow down' }), undefined)).toBe('429');
    expect(statusOf(errorFromFailure(ProviderError, { kind: 'timeout', service: 'the model', retryable: true, logDetail: 'no headers' }), undefined)).toBe('timeout');
    expect(statusOf(errorFromFailure(ProviderError, { kind: 'ended_early', service: 'speech synthesis', retryable: true, logDetail: 'no [DONE]' }), undefined)).toBe('ended_early');
    expect(statusOf(new Error('boom'), undefined)).toBe('error');
  });

  it('times a stream to its end, a failure by its status, and closes the provider\'s stream when the consumer stops early', async () => {
    const ok = calls('ok');
    const done = model([{ type: 'text', delta: 'hi' }, { type: 'finish', reason: 'stop' }]);
    const seen: ModelEvent[] = [];
    for await (const e of observeLanguageModel(telemetry, done).stream(request())) seen.push(e);
    expect(seen.map((e) => e.type)).toEqual(['text', 'finish']);
    expect(calls('ok')).toBe(ok + 1);

    const failing = model([{ type: 'text', delta: 'hi' }], errorFromFailure(ProviderError, { kind: 'broken', service: 'the model', retryable: true, logDetail: 'reset' }));
    await expect(async () => {
      for await (const _ of observeLanguageModel(telemetry, failing).stream(request())) void _;
    }).rejects.toThrow(ProviderError);
    expect(calls('broken')).toBe(1);

    const cut = model([{ type: 'text', delta: 'a' }, { type: 'text', delta: 'b' }]);
    const controller = new AbortController();
    for await (const _ of observeLanguageModel(telemetry, cut).stream(request(controller.signal))) {
      void _;
      controller.abort();
      break;
    }
    expect(cut.closed).toBe(true);
    expect(calls('aborted')).toBe(1);
  });

  it('a recogniser keeps what it can do: partials and partial() pass through (the lexical end-of-turn cue needs them), and only where they exist', async () => {
    const stream = (partial: boolean): TranscriptionStream => ({
      write: () => undefined,
      abort: () => undefined,
      finish: async () => 'book a table and',
      ...(partial ? { partial: async () => 'book a table' } : {}),
    });
    const streaming: SpeechToText = { name: 'fake', partials: true, open: () => stream(true) };
    const batch: SpeechToText = { name: 'fake', open: () => stream(false) };
    const observed = observeSpeechToText(telemetry, streaming);
    expect(observed.partials).toBe(true);
    expect(await observed.open().partial?.()).toBe('book a table');
    expect(observeSpeechToText(telemetry, batch).partials).toBeUndefined();
    expect(observeSpeechToText(telemetry, batch).open().partial).toBeUndefined();
  });

  it('every method of a recogniser stream passes through: the end-of-turn recheck reads the last word\'s posterior and the sentence-end probability', async () => {
    const full: Required<TranscriptionStream> = {
      write: () => undefined,
      abort: () => undefined,
      finish: async () => 'what is twelve times seven',
      partial: async () => 'what is twelve times',
      lastWordPosterior: async () => 0.66,
      sentenceEndProbability: async () => 0.13,
    };
    const methods = Object.keys(full).sort();
    const recognitions = () => telemetry.metrics.providerRequest.of('fake', 'asr', 'ok').total.count;
    const before = recognitions();
    const observed = observeSpeechToText(telemetry, { name: 'fake', partials: true, open: () => ({ ...full }) }).open();
    expect(Object.keys(observed).sort()).toEqual(methods);
    expect(await observed.lastWordPosterior?.()).toBe(0.66);
    expect(await observed.sentenceEndProbability?.()).toBe(0.13);
    expect(await observed.partial?.()).toBe('what is twelve times');
    expect(await observed.finish()).toBe('what is twelve times seven');
    expect(recognitions() - before).toBe(1);
  });
});
