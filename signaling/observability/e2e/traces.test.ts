import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone, streamRealtime } from '../../../media/testing/audio-stream.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../../session/testing/fake-openai-server.ts';
import { startFakeOpenAiSpeechServer, type FakeOpenAiSpeechServer } from '../../../session/testing/fake-openai-speech-server.ts';
import { eventually, say, sid, waitTurn, WAIT_MS } from '../../testing/conversation.ts';
import { OtlpReceiver, type ReceivedSpan } from '../../testing/otlp-receiver.ts';
import { startTestServer, type TestServer } from '../../testing/test-server.ts';
import { startSession } from '../../testing/ws-test-client.ts';

/**
 * OpenTelemetry end to end: with OTEL_EXPORTER_OTLP_ENDPOINT set, a typed and a spoken turn are
 * exported to an in-process OTLP/HTTP collector as session → turn → provider call spans, and each
 * request to the OpenAI-compatible providers carries the W3C traceparent of its own span.
 */

let otlp: OtlpReceiver;
let llm: FakeOpenAiServer;
let speech: FakeOpenAiSpeechServer;
let t: TestServer;

beforeAll(async () => {
  otlp = await OtlpReceiver.start();
  llm = await startFakeOpenAiServer();
  speech = await startFakeOpenAiSpeechServer();
  t = await startTestServer({
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=abc123',
    LLM_PROVIDER: 'openai', LLM_BASE_URL: llm.url,
    ASR_PROVIDER: 'openai', ASR_BASE_URL: speech.url,
    TTS_PROVIDER: 'openai', TTS_BASE_URL: speech.url, TTS_VOICES: 'alloy',
  });
});
afterAll(async () => {
  await t?.stop();
  await Promise.all([otlp?.close(), llm?.close(), speech?.close()]);
});

const byName = (name: string): ReceivedSpan[] => otlp.spans.filter((s) => s.name === name);
const traceparent = (span: ReceivedSpan): string => `00-${span.traceId}-${span.spanId}-01`;

describe('OpenTelemetry traces', () => {
  it('session → turn → provider call, with traceparent on every provider request', async () => {
    llm.script(() => ({ text: 'Eighty-four.' }));
    speech.scriptTranscription(() => 'what is twelve times seven');

    const text = await startSession(t.wsUrl, { session_id: sid('tr'), api_key: t.key, mode: { kind: 'service', modality: 'text', greeting: false } });
    const typed = await say(text.client, 'what is twelve times seven');
    text.client.close();

    const voice = await startSession(t.wsUrl, { session_id: sid('tr'), api_key: t.key, mode: { kind: 'service', greeting: false }, audio: { sr: 16000 } });
    await streamRealtime(voice.client, concat(roomTone(300), loadFixture('twelve.wav'), roomTone(900)));
    const asr = await voice.client.waitFor('asr', () => true, 8000);
    await waitTurn(voice.client, asr.turn_id!, 15000);
    voice.client.close();

    // Spans are exported in batches: wait for both sessions' spans to arrive.
    await eventually(() => byName('parley.session').length === 2, WAIT_MS, 'two session spans');
    const sessions = byName('parley.session');
    for (const s of sessions) expect(s.parentSpanId).toBe('');
    const turns = byName('parley.turn');
    const turnOf = (id: string): ReceivedSpan => {
      const turn = turns.find((s) => s.attributes['parley.turn_id'] === id);
      if (!turn) throw new Error(`no turn span for ${id}`);
      return turn;
    };

    // The typed turn: a child of its session, with its stages; the model call its child.
    const typedTurn = turnOf(typed.turnId);
    const textSession = sessions.find((s) => s.attributes['parley.modality'] === 'text')!;
    expect(typedTurn).toMatchObject({ traceId: textSession.traceId, parentSpanId: textSession.spanId });
    expect(typedTurn.attributes['parley.status']).toBe('completed');
    expect(typedTurn.attributes['parley.stage.text_first_delta_ms']).toBe(typed.done.metrics?.text_first_delta);
    const typedLlm = byName('parley.llm').filter((s) => s.parentSpanId === typedTurn.spanId);
    expect(typedLlm).toHaveLength(1);
    expect(typedLlm[0]!.attributes).toMatchObject({ 'parley.provider': 'openai:gpt-4o-mini', 'parley.status': 'ok' });

    // The spoken turn: recognition, the model and synthesis all under it.
    const spokenTurn = turnOf(asr.turn_id!);
    const voiceSession = sessions.find((s) => s.attributes['parley.modality'] === 'voice')!;
    expect(spokenTurn).toMatchObject({ traceId: voiceSession.traceId, parentSpanId: voiceSession.spanId });
    const under = (name: string): ReceivedSpan[] => byName(name).filter((s) => s.parentSpanId === spokenTurn.spanId);
    expect(under('parley.asr')).toHaveLength(1);
    expect(under('parley.llm')).toHaveLength(1);
    expect(under('parley.tts').length).toBe(speech.speeches.length);

    // W3C trace context reached each provider request, naming the span of that very call.
    const llmSpans = [...typedLlm, ...under('parley.llm')];
    expect(llm.headers.map((h) => h.traceparent).sort()).toEqual(llmSpans.map(traceparent).sort());
    expect(speech.transcriptions.map((r) => r.headers.traceparent)).toEqual(under('parley.asr').map(traceparent));
    expect(speech.speeches.map((r) => r.headers.traceparent).sort()).toEqual(under('parley.tts').map(traceparent).sort());
    // The collector got the configured headers.
    expect(otlp.requests.every((h) => h['x-collector-key'] === 'abc123')).toBe(true);
  });
});
