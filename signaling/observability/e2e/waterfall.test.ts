import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { endpointerOptions } from '../../../media/endpointer.ts';
import { concat, loadFixture } from '../../../media/testing/audio-stream.ts';
import { DOWNLINK_FRAME_MS } from '../../../media/downlink-pacer.ts';
import { loadVadFactory } from '../../../media/vad-factory.ts';
import { TURN_STAGES, type TurnMetrics } from '../../../session/protocol/turn-metrics.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../../session/testing/fake-openai-server.ts';
import { startFakeOpenAiSpeechServer, type FakeOpenAiSpeechServer } from '../../../session/testing/fake-openai-speech-server.ts';
import { spawnServer, type ChildServer } from '../../testing/child-server.ts';
import { sid, waitTurn } from '../../testing/conversation.ts';
import { scrape, type PromScrape } from '../../testing/prom-scrape.ts';
import { startSession, type WsTestClient } from '../../testing/ws-test-client.ts';
import { frames, ScriptedMic, zeros, type Moment } from './scripted-mic.ts';

/**
 * The per-turn waterfall end to end: typed turns, spoken turns and barge-ins against the real
 * server (in a process of its own; fake OpenAI-compatible model and speech servers; real
 * sockets), then a scrape. Each stage on `done.metrics` must agree with the same span as the
 * client saw it, within 5 ms, and the histograms must count exactly the stages turns reported.
 *
 * How agreement is judged. Where the server's span ends and starts with a frame it sends (asr,
 * text_delta, audio, interrupted), the client's view is the gap between their arrivals. Where
 * it starts with audio the client sent (the last voiced frame, the speech onset), the client's
 * view runs from that send; it then also holds the server's wait for a CPU to read the frame,
 * so the server's value may only be shorter (by at most 1 ms of clock reading the other way).
 * A busy machine delays either process by more than 5 ms at times, so up to TRIALS turns are
 * measured and each span must agree in at least one of them; the bound above holds in all.
 *
 * A barge-in pauses the downlink with no frame to say so: the client sees its audio stop. The
 * pause falls after the last frame it got and before the next one was due, a frame period
 * later, so there the window is that frame period wider.
 */

const AGREE_MS = 5;
/** Trials of a spoken turn or a barge-in (seconds each); typed turns are cheap and get twice as many. */
const TRIALS = 4;
/** Up to TRIALS real-time streams of a few seconds each, on a machine that may be busy. */
const VOICE_TEST_TIMEOUT_MS = 60_000;

let llm: FakeOpenAiServer;
let speech: FakeOpenAiSpeechServer;
let t: ChildServer;
let before: PromScrape;
/** done.metrics of every turn the tests waited for, for the scrape's counts. */
const dones: TurnMetrics[] = [];
/** Sessions still open; each test closes its own (cleanly, 1000) even when it fails. */
const open = new Set<WsTestClient>();
afterEach(() => {
  for (const client of open) client.close();
  open.clear();
});

beforeAll(async () => {
  llm = await startFakeOpenAiServer();
  // Tokens stream in over time, as from a real model: each arrives, and leaves, on its own.
  llm.delayMs = 10;
  speech = await startFakeOpenAiSpeechServer();
  t = await spawnServer({
    LLM_PROVIDER: 'openai', LLM_BASE_URL: llm.url,
    ASR_PROVIDER: 'openai', ASR_BASE_URL: speech.url,
    TTS_PROVIDER: 'openai', TTS_BASE_URL: speech.url, TTS_VOICES: 'alloy',
    VAD_PROVIDER: 'silero',
  });
  before = await scrape(t.url);
});
afterAll(async () => {
  t?.kill();
  await llm?.close();
  await speech?.close();
});

/** One comparison: the server's value, the client's view of the same span, whether that view starts at a send, and how much later than the client's view the server's end may fall. */
type Pair = [what: string, server: number | undefined, client: number, fromSend?: 'from a send', later?: number];

/** Runs `trial` until every span has agreed within AGREE_MS at least once (see above). */
async function agree(trial: (n: number) => Promise<Pair[]>, trials = TRIALS): Promise<void> {
  const best = new Map<string, { off: number; server: number; client: number }>();
  for (let n = 0; n < trials; n += 1) {
    for (const [what, server, client, fromSend, later = 0] of await trial(n)) {
      expect(server, `${what} is on done.metrics`).toBeTypeOf('number');
      if (fromSend) expect(server!, `${what}: the server's span (${server} ms) is longer than the client's (${client.toFixed(1)} ms)`).toBeLessThanOrEqual(client + later + 1);
      const off = server! > client ? Math.max(0, server! - client - later) : client - server!;
      if (off < (best.get(what)?.off ?? Number.POSITIVE_INFINITY)) best.set(what, { off, server: server!, client });
    }
    if ([...best.values()].every((b) => b.off <= AGREE_MS)) return;
  }
  const failing = [...best].filter(([, b]) => b.off > AGREE_MS).map(([what, b]) => `${what}: server ${b.server} ms, client ${b.client.toFixed(1)} ms`);
  expect.fail(`in ${trials} trials these never agreed within ${AGREE_MS} ms (closest shown): ${failing.join('; ')}`);
}

async function voiceSession(): Promise<{ client: WsTestClient; mic: ScriptedMic }> {
  const { client } = await startSession(t.wsUrl, { session_id: sid('wf'), api_key: t.key, mode: { kind: 'service', greeting: false }, audio: { sr: 16000 } });
  open.add(client);
  return { client, mic: new ScriptedMic(client) };
}

/**
 * What the server's VAD (Silero, its default) and endpointer made of everything the microphone
 * sent: the server's options for a recogniser without partial results (no lexical cue) and the
 * default barge-in policy.
 */
async function moments(mic: ScriptedMic, type: Moment['type']): Promise<Moment[]> {
  return (await mic.replay(await loadVadFactory('silero'), endpointerOptions(undefined, false, false))).filter((m) => m.type === type);
}

describe('the per-turn waterfall', () => {
  it('typed turns: text_first_delta and llm_first_token agree with the frames the client saw', async () => {
    llm.script(() => ({ text: 'Twelve times seven is eighty-four.' }));
    const { client } = await startSession(t.wsUrl, { session_id: sid('wf'), api_key: t.key, mode: { kind: 'service', modality: 'text', greeting: false } });
    open.add(client);
    const turn = async (): Promise<{ metrics: TurnMetrics; asrAt: number; firstDeltaAt: number }> => {
      const from = client.frames.length;
      client.send({ type: 'input_text', text: 'what is twelve times seven' });
      const asr = await client.waitFor('asr', () => true, 5000, from);
      const reply = await waitTurn(client, asr.turn_id!);
      const metrics = reply.done.metrics!;
      dones.push(metrics);
      expect(Object.keys(metrics).sort()).toEqual(['llm_first_token', 'text_first_delta']);
      expect(metrics.llm_first_token!).toBeLessThanOrEqual(metrics.text_first_delta!);
      return { metrics, asrAt: client.arrivalOf(asr), firstDeltaAt: client.arrivalOf(client.all('text_delta').find((f) => f.turn_id === asr.turn_id)!) };
    };
    await turn(); // warm: the first request to a provider opens its connection
    await agree(async () => {
      // asr leaves the moment input_text is handled, and the model is asked right after it.
      const { metrics, asrAt, firstDeltaAt } = await turn();
      return [
        ['text_first_delta', metrics.text_first_delta, firstDeltaAt - asrAt],
        ['llm_first_token', metrics.llm_first_token, firstDeltaAt - asrAt],
      ];
    }, TRIALS * 2);
    client.assertProtocol();
  });

  it('spoken turns: end of turn, transcription, model and first audio agree with the client', async () => {
    speech.scriptTranscription(() => 'what is twelve times seven');
    llm.script(() => ({ text: 'It is eighty-four.' }));
    const { client, mic } = await voiceSession();
    await agree(async (n) => {
      const from = client.frames.length;
      const audioFrom = client.audio.length;
      await mic.stream(concat(zeros(300), frames(loadFixture('twelve.wav')), zeros(1000)));
      const asr = await client.waitFor('asr', () => true, 8000, from);
      const reply = await waitTurn(client, asr.turn_id!, 15000);
      const m = reply.done.metrics!;
      dones.push(m);
      expect(Object.keys(m).sort()).toEqual(['asr_final', 'end_of_turn', 'first_audio_out', 'llm_first_token', 'tts_first_audio']);
      // The end-of-turn wait is the configured trailing silence (260 ms by default), as the frames arrived (give or take one).
      expect(m.end_of_turn!).toBeGreaterThanOrEqual(260 - 20);
      // Recognition, the model and synthesis all happen before the first audio leaves.
      expect(m.asr_final! + m.llm_first_token! + m.tts_first_audio!).toBeLessThanOrEqual(m.first_audio_out! + 0.3);
      const end = (await moments(mic, 'turn_end'))[n];
      if (end?.type !== 'turn_end') throw new Error('the endpointer replay found no turn end');
      const lastVoiced = mic.sentAt[end.lastVoicedFrame]!;
      const asrAt = client.arrivalOf(asr);
      const firstDeltaAt = client.arrivalOf(client.all('text_delta').find((f) => f.turn_id === asr.turn_id)!);
      const firstAudioAt = client.audioArrivals[audioFrom]!;
      return [
        // asr leaves when the transcript is final; the model is asked right after it.
        ['end_of_turn + asr_final', m.end_of_turn! + m.asr_final!, asrAt - lastVoiced, 'from a send'],
        ['llm_first_token', m.llm_first_token, firstDeltaAt - asrAt],
        ['first_audio_out - asr_final', m.first_audio_out! - m.asr_final!, firstAudioAt - asrAt],
        ['end_of_turn + first_audio_out', m.end_of_turn! + m.first_audio_out!, firstAudioAt - lastVoiced, 'from a send'],
      ];
    });
    client.assertProtocol();
  }, VOICE_TEST_TIMEOUT_MS);

  it('barge-ins: barge_in_stop runs from the speech onset to the downlink pausing, as the client saw it', async () => {
    speech.scriptTranscription(() => 'tell me a long story');
    llm.script(() => ({ text: 'Once upon a time there was a very long story that went on and on for a long while.' }));
    const { client, mic } = await voiceSession();
    await mic.stream(concat(zeros(300), frames(loadFixture('name.wav')), zeros(600)));
    let speaking = await client.waitFor('asr', () => true, 8000);
    await agree(async (n) => {
      const turnId = speaking.turn_id!;
      // Let the reply play a while, then talk over it.
      await client.waitFor('text_delta', (f) => f.turn_id === turnId, 8000);
      const audioFrom = client.audio.length;
      await client.waitAudio(audioFrom + 9, 8000);
      const bargeFrom = mic.sentAt.length;
      const from = client.frames.length;
      // Sustained speech confirms the interruption (the default policy), after the pause.
      await mic.stream(concat(zeros(100), frames(loadFixture('twelve.wav')), zeros(600)));
      const interrupted = await client.waitFor('interrupted', (f) => f.turn_id === turnId, 8000);
      const cut = await waitTurn(client, turnId);
      dones.push(cut.done.metrics!);
      expect(cut.done.status).toBe('interrupted');
      speaking = await client.waitFor('asr', () => true, 8000, from);
      const start = (await moments(mic, 'speech_start')).find((m) => m.frame >= bargeFrom);
      if (start?.type !== 'speech_start') throw new Error(`the endpointer replay found no barge-in in trial ${n}`);
      const onset = mic.sentAt[start.onsetFrame]!;
      // The cut reply's last audio: nothing of it came after the pause (the interruption follows later).
      const lastAudio = Math.max(...client.audioArrivals.filter((at) => at < client.arrivalOf(interrupted)));
      expect(lastAudio).toBeGreaterThan(onset);
      return [['barge_in_stop', cut.done.metrics!.barge_in_stop, lastAudio - onset, 'from a send', DOWNLINK_FRAME_MS]];
    });
    dones.push((await waitTurn(client, speaking.turn_id!, 15000)).done.metrics!);
    client.assertProtocol();
  }, VOICE_TEST_TIMEOUT_MS);

  it('the scrape counted exactly the stages the turns reported, with bounded labels', async () => {
    // The sessions' close handshakes may still be under way.
    let after = await scrape(t.url);
    for (let i = 0; i < 100 && after.value('parley_sessions_active') > 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      after = await scrape(t.url);
    }
    const delta = (name: string, labels: Record<string, string> = {}): number => after.value(name, labels) - before.value(name, labels);
    for (const stage of TURN_STAGES) {
      const reported = dones.filter((m) => m[stage] !== undefined);
      expect(delta('parley_turn_stage_seconds_count', { stage }), `parley_turn_stage_seconds_count{stage="${stage}"}`).toBe(reported.length);
      expect(delta('parley_turn_stage_seconds_sum', { stage })).toBeCloseTo(reported.reduce((s, m) => s + m[stage]! / 1000, 0), 3);
    }
    expect(delta('parley_turns_total')).toBe(dones.length);
    expect(delta('parley_turns_total', { modality: 'text' })).toBe(dones.filter((m) => m.text_first_delta !== undefined).length);
    expect(delta('parley_provider_request_seconds_count', { provider: 'openai', kind: 'llm' })).toBe(llm.requests.length);
    expect(delta('parley_provider_request_seconds_count', { provider: 'openai', kind: 'asr' })).toBe(speech.transcriptions.length);
    expect(delta('parley_provider_request_seconds_count', { provider: 'openai', kind: 'tts' })).toBe(speech.speeches.length);
    // Every session closed cleanly (1000) and none is left live.
    const closes = [...after.labelValues('parley_sessions_total', 'close_code')].map((code) => `${code}: ${delta('parley_sessions_total', { close_code: code })}`);
    expect(delta('parley_sessions_total', { close_code: '1000' }), closes.join(', ')).toBe(3);
    expect(after.value('parley_sessions_active')).toBe(0);

    // Label values come from closed sets: no session id, transcript or reply text ever becomes one.
    const allowed: Record<string, readonly string[]> = {
      stage: TURN_STAGES,
      modality: ['voice', 'text'],
      transport: ['websocket', 'webrtc'],
      kind: ['llm', 'asr', 'tts', 'search'],
      provider: ['openai', 'local', 'flite', 'pocketsphinx', 'searxng'],
      outcome: ['succeeded', 'failed', 'cancelled', 'timed_out', 'unknown', 'resumed', 'refused'],
    };
    const patterns: Record<string, RegExp> = { status: /^(ok|aborted|timeout|stalled|unreachable|broken|malformed|ended_early|upstream_error|error|[1-5]\d\d)$/, close_code: /^(\d{4}|other)$/, code: /^[a-z_]+$/, le: /^([\d.e+-]+|\+Inf)$/ };
    for (const sample of after.samples.filter((s) => s.name.startsWith('parley_'))) {
      for (const [label, value] of Object.entries(sample.labels)) {
        const where = `${sample.name}{${label}="${value}"}`;
        if (patterns[label]) expect(value, where).toMatch(patterns[label]!);
        else expect(allowed[label], `${where}: a label outside the closed sets`).toContain(value);
      }
    }
  });
});
