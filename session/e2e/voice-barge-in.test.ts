import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../signaling/testing/test-server.ts';
import { startSession, type WsTestClient } from '../../signaling/testing/ws-test-client.ts';
import { concat, loadFixture, roomTone, streamRealtime } from '../../media/testing/audio-stream.ts';
import { FliteTextToSpeech } from '../providers/flite-tts.ts';
import { SentenceSplitter } from '../voice/sentences.ts';
import { SpokenTimeline } from '../voice/spoken-text.ts';

/**
 * False-interruption recovery and the lexical end of turn over the real WebSocket path (Silero
 * VAD, pocketsphinx, flite). Sounds are played 1.2 s into a reply of about 6 s.
 */
const REPLY = 'One two three four five six seven eight nine ten. Eleven twelve thirteen fourteen fifteen sixteen seventeen.';

/** A downlink silence this long is a pause (a backchannel holds it ≥ 500 ms); shorter ones are event-loop stalls under load. */
const PAUSE_GAP_MS = 300;

let t: TestServer;
let n = 0;
beforeAll(async () => {
  t = await startTestServer({ LOCAL_LLM_WORD_DELAY_MS: '10' });
});
afterAll(async () => {
  await t.stop();
});

async function voiceSession(server: TestServer = t) {
  n += 1;
  const { client } = await startSession(server.wsUrl, { session_id: `bi-${n}`, api_key: server.key, mode: { kind: 'service', greeting: false }, audio: { sr: 16000 } });
  const arrivals: number[] = [];
  client.ws.on('message', (_data, binary) => binary && arrivals.push(performance.now()));
  return { client, arrivals };
}

/** Starts the reply, plays `sound` into it after 1.2 s of its audio, waits for the reply to end. */
async function replyWith(sound: Int16Array | undefined, server: TestServer = t) {
  const { client, arrivals } = await voiceSession(server);
  client.send({ type: 'inject_context', message_id: 'm1', role: 'user', text: `say ${REPLY}` });
  const turnId = (await client.waitFor('inject_context_ack')).turn_id!;
  await client.waitFor('text_delta', (f) => f.turn_id === turnId, 8000);
  await client.waitAudio(0, 8000);
  await new Promise((r) => setTimeout(r, 1200 - (performance.now() - arrivals[0]!)));
  const soundAt = performance.now();
  if (sound) void streamRealtime(client, concat(sound, roomTone(2500)));
  const done = await client.waitFor('done', (f) => f.turn_id === turnId, 20000);
  const audio = Buffer.concat(client.audio);
  const gaps = arrivals.slice(1).map((at, i) => ({ from: arrivals[i]!, ms: at - arrivals[i]! })).filter((g) => g.ms > PAUSE_GAP_MS && g.from >= soundAt);
  return { client, turnId, done, audio, gaps, soundAt };
}

function scaled(samples: Int16Array, db: number): Int16Array {
  const gain = 10 ** (db / 20);
  return Int16Array.from(samples, (v) => Math.round(v * gain));
}

let reference: Buffer;
async function referenceAudio(): Promise<Buffer> {
  if (!reference) {
    const { client, audio } = await replyWith(undefined);
    reference = audio;
    client.close();
  }
  return reference;
}

describe('false-interruption recovery (Silero)', () => {
  it('a backchannel resumes the reply from the paused point: no interrupted, no lost or repeated audio', async () => {
    const { client, done, audio, gaps } = await replyWith(loadFixture('okay.wav'));
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    // It did pause: one gap in the downlink after the sound, over by BARGE_IN_MAX_PAUSE_MS (1.5 s)
    // at the latest, plus timer lateness on a loaded machine (the bench measures the spread).
    expect(gaps).toHaveLength(1);
    expect(gaps[0]!.ms).toBeLessThanOrEqual(2000);
    // Every byte of the reply arrived exactly once, in order.
    expect(audio.equals(await referenceAudio())).toBe(true);
    // The backchannel did not become a turn.
    expect(client.all('asr')).toHaveLength(1);
    client.assertProtocol();
    client.close();
  });

  it('a short backchannel the recogniser hears as two other words ("yeah" as "you have") resumes the reply', async () => {
    const { client, done, audio } = await replyWith(loadFixture('yeah.wav'));
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    expect(audio.equals(await referenceAudio())).toBe(true);
    expect(client.all('asr')).toHaveLength(1);
    client.close();
  });

  it('a voice 16 dB under the user\'s level (someone across the room) does not interrupt or take a turn', async () => {
    const { client, done, audio } = await replyWith(scaled(loadFixture('name.wav'), -16));
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    expect(audio.equals(await referenceAudio())).toBe(true);
    expect(client.all('asr')).toHaveLength(1);
    client.close();
  });

  it('a cough resumes it (Silero does not even pause for it)', async () => {
    const { client, done, audio } = await replyWith(loadFixture('cough.wav'));
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    expect(audio.equals(await referenceAudio())).toBe(true);
    client.close();
  });

  it('a steady tone does not interrupt', async () => {
    const { client, done, audio, gaps } = await replyWith(loadFixture('tone.wav'));
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    expect(gaps).toHaveLength(0);
    expect(audio.equals(await referenceAudio())).toBe(true);
    client.close();
  });

  it('a real interruption truncates the reply to exactly the audio that was sent', async () => {
    const { client, turnId, done, audio } = await replyWith(loadFixture('name.wav'));
    expect(done.status).toBe('interrupted');
    expect(await client.waitFor('interrupted', (f) => f.turn_id === turnId)).toMatchObject({ clear: true, barge_seq: 1 });
    // The client played all it got: the heard text is the text of exactly that much audio.
    client.send({ type: 'client_event', event: 'playback_stopped', remaining_ms: 0, barge_seq: 1 });
    const corrected = await client.waitFor('utterance', (u) => u.turn_id === turnId && u.corrected);
    const receivedMs = audio.length / 2 / 16;
    expect(corrected.text).toBe(await heardText(receivedMs));
    expect(corrected.text.length).toBeGreaterThan(0);
    expect(REPLY.length).toBeGreaterThan(corrected.text.length);
    // Nothing was sent after the pause: the reference reply is longer and starts the same.
    expect((await referenceAudio()).subarray(0, audio.length).equals(audio)).toBe(true);
    expect((await client.waitFor('asr', (f) => f.input_source === 'voice' && f.turn_id !== turnId, 8000)).text).toBe('my name is robert');
    client.assertProtocol();
    client.close();
  });
});

describe('with the WebRTC VAD (fvad), which calls a cough and a tone speech', () => {
  let fvad: TestServer;
  beforeAll(async () => {
    fvad = await startTestServer({ LOCAL_LLM_WORD_DELAY_MS: '10', VAD_PROVIDER: 'webrtc' });
  });
  afterAll(async () => {
    await fvad.stop();
  });

  it('a cough pauses the reply, then it resumes from the paused point', async () => {
    const { client, done, audio, gaps } = await replyWith(loadFixture('cough.wav'), fvad);
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    expect(gaps).toHaveLength(1);
    expect(audio.equals(await referenceAudio())).toBe(true);
    client.close();
  });
});

describe('lexical end of turn', () => {
  it('a thinking pause after a trailing "and" is not cut: one turn, one transcript', async () => {
    const { client } = await voiceSession();
    await streamRealtime(client, concat(roomTone(200), loadFixture('pause-and.wav'), roomTone(1600)));
    const asr = await client.waitFor('asr', () => true, 8000);
    // The words after the pause are in the same transcript (pocketsphinx hears "seat" as "she'd" now and then).
    expect(asr.text).toMatch(/two and .*window/);
    await client.waitFor('done', (f) => f.turn_id === asr.turn_id, 15000);
    expect(client.all('asr')).toHaveLength(1);
    client.close();
  });
});

/** What the server's timeline says was heard after `ms` of this reply's audio (flite, voice slt). */
async function heardText(ms: number): Promise<string> {
  const tts = new FliteTextToSpeech(1);
  const timeline = new SpokenTimeline();
  const splitter = new SentenceSplitter();
  for (const sentence of [...splitter.push(REPLY), ...splitter.flush()]) {
    for await (const chunk of tts.synthesize(sentence, 'slt', new AbortController().signal)) timeline.add(sentence, (chunk.samples.length * 1000) / chunk.sampleRate);
  }
  await tts.close();
  return timeline.textAt(ms);
}

export type { WsTestClient };
