import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTestServer, WARM_RECOGNISERS, type TestServer } from '../../signaling/testing/test-server.ts';
import { startSession, type WsTestClient } from '../../signaling/testing/ws-test-client.ts';
import { concat, loadFixture, roomTone, streamRealtime } from '../../media/testing/audio-stream.ts';
import { LoopStalls } from '../../media/testing/loop-stalls.ts';
import { DEFAULT_BARGE_IN } from '../voice/barge-in.ts';

/**
 * False-interruption recovery over the real WebSocket path with the server's own providers
 * (Silero VAD, pocketsphinx, flite): what the real VAD and recogniser make of a backchannel, a
 * cough, a burst of noise and a steady tone. Sounds are played 1.2 s into a reply of about 6 s. The pause and
 * resume, a real interruption's truncation, fvad's pauses and the lexical end of turn, in
 * simulated time: session/voice/false-interruption.test.ts, lexical-end-of-turn.test.ts.
 */
const REPLY = 'One two three four five six seven eight nine ten. Eleven twelve thirteen fourteen fifteen sixteen seventeen.';
/** 3.9 s of audio: still playing 1.2 s after the 1.5 s tone, played 1.2 s in, has ended. */
const SHORT_REPLY = 'One two three four five six seven eight nine ten. Eleven twelve.';

/**
 * A downlink silence this long is a pause (a backchannel holds it ≥ 500 ms). The server runs in
 * this process, so a stall of its event loop silences the wire too (356 ms seen beside two CPU
 * burners, which failed the one-pause check): each silence counts without the longest stall in it.
 */
const PAUSE_GAP_MS = 300;
const stalls = new LoopStalls();

let t: TestServer;
let n = 0;
beforeAll(async () => {
  stalls.start();
  t = await startTestServer({ ...WARM_RECOGNISERS, LOCAL_LLM_WORD_DELAY_MS: '10' });
  // The reference reply starts beside the tests rather than after the first of them; a failure
  // reaches every test that awaits it.
  referenceAudio().catch(() => undefined);
});
afterAll(async () => {
  stalls.stop();
  await t.stop();
});

async function voiceSession() {
  n += 1;
  const { client } = await startSession(t.wsUrl, { session_id: `bi-${n}`, api_key: t.key, mode: { kind: 'service', greeting: false }, audio: { sr: 16000 } });
  return client;
}

/** Starts the reply, plays `sound` into it after 1.2 s of its audio, waits for the reply to end. */
async function replyWith(sound: Int16Array | undefined, text = REPLY) {
  const client = await voiceSession();
  client.send({ type: 'inject_context', message_id: 'm1', role: 'user', text: `say ${text}` });
  const turnId = (await client.waitFor('inject_context_ack')).turn_id!;
  await client.waitFor('text_delta', (f) => f.turn_id === turnId, 8000);
  await client.waitAudio(0, 8000);
  await new Promise((r) => setTimeout(r, 1200 - (performance.now() - client.audioArrivals[0]!)));
  // The first frame sent holds the 20 ms before it: that is when the sound began.
  const soundAt = performance.now() - 20;
  if (sound) void streamRealtime(client, concat(sound, roomTone(2500)));
  const done = await client.waitFor('done', (f) => f.turn_id === turnId, 20000);
  return { client, turnId, done, soundAt, audio: Buffer.concat(client.audio), gaps: client.audioGaps(PAUSE_GAP_MS, soundAt, stalls) };
}

function scaled(samples: Int16Array, db: number): Int16Array {
  const gain = 10 ** (db / 20);
  return Int16Array.from(samples, (v) => Math.round(v * gain));
}

/** The reply heard with nothing played into it, made once. */
let reference: Promise<Buffer> | undefined;
function referenceAudio(): Promise<Buffer> {
  reference ??= replyWith(undefined).then(({ client, audio }) => {
    client.close();
    return audio;
  });
  return reference;
}

// Each test waits out a 6 s reply in real time on a session of its own, so they run side by
// side (four voice sessions and the reference are a light load for one server); assertions use each test's own
// `expect` so a failure names its test.
describe.concurrent('false-interruption recovery (Silero)', () => {
  it('a backchannel resumes the reply from the paused point: no interrupted, no lost or repeated audio', async ({ expect }) => {
    const { client, done, audio, gaps } = await replyWith(loadFixture('okay.wav'));
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    // It did pause: one gap in the downlink after the sound, over by BARGE_IN_MAX_PAUSE_MS at the
    // latest, give or take the frames on either side of it. The resume timer's lateness on a
    // loaded machine is a stall, already left out of the gap.
    expect(gaps).toHaveLength(1);
    expect(gaps[0]).toBeLessThanOrEqual(DEFAULT_BARGE_IN.maxPauseMs + 100);
    // Every byte of the reply arrived exactly once, in order.
    expect(audio.equals(await referenceAudio())).toBe(true);
    // The backchannel did not become a turn.
    expect(client.all('asr')).toHaveLength(1);
    client.assertProtocol();
    client.close();
  });

  it('a short backchannel the recogniser hears as two other words ("yeah" as "you have") resumes the reply', async ({ expect }) => {
    const { client, done, audio } = await replyWith(loadFixture('yeah.wav'));
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    expect(audio.equals(await referenceAudio())).toBe(true);
    expect(client.all('asr')).toHaveLength(1);
    client.close();
  });

  it('a voice 16 dB under the user\'s level (someone across the room) does not interrupt or take a turn', async ({ expect }) => {
    const { client, done, audio } = await replyWith(scaled(loadFixture('name.wav'), -16));
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    expect(audio.equals(await referenceAudio())).toBe(true);
    expect(client.all('asr')).toHaveLength(1);
    client.close();
  });

  it('a burst of noise (hiss that Silero never voices) pauses the reply for a moment; it goes on whole, with no turn', async ({ expect }) => {
    const { client, done, audio, soundAt } = await replyWith(loadFixture('noise.wav'));
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    // One pause: about 200 ms (hiss from its second frame, dropped four frames after the run's
    // eighth; its length in fake time: voice/false-interruption.test.ts). Should a loaded Silero
    // hand its frames to fvad, which calls noise speech, the pause is a longer one, still single.
    const pauses = client.audioGaps(120, soundAt, stalls);
    expect(pauses).toHaveLength(1);
    expect(pauses[0]).toBeLessThanOrEqual(DEFAULT_BARGE_IN.maxPauseMs + 100);
    expect(audio.equals(await referenceAudio())).toBe(true);
    expect(client.all('asr')).toHaveLength(1);
    client.close();
  });

  it('a cough resumes it (Silero does not even pause for it)', async ({ expect }) => {
    const { client, done, audio } = await replyWith(loadFixture('cough.wav'));
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    expect(audio.equals(await referenceAudio())).toBe(true);
    client.close();
  });
});

// The tone runs after the others, beside only its own reference: it checks that the downlink
// never pauses at all, and with the other four beside it that failed once in eleven runs (a
// 1.5 s pause; cause not found). A shorter reply is enough to hold the whole tone.
describe('a steady tone (Silero)', () => {
  it('does not interrupt', async ({ expect }) => {
    const [{ client, done, audio, gaps }, reference] = await Promise.all([
      replyWith(loadFixture('tone.wav'), SHORT_REPLY),
      replyWith(undefined, SHORT_REPLY),
    ]);
    reference.client.close();
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    expect(gaps).toHaveLength(0);
    expect(audio.equals(reference.audio)).toBe(true);
    client.close();
  });
});

export type { WsTestClient };
