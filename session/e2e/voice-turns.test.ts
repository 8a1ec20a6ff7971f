import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../signaling/testing/test-server.ts';
import { startSession, type WsTestClient } from '../../signaling/testing/ws-test-client.ts';
import { concat, loadFixture, roomTone, silence, streamRealtime } from '../../media/testing/audio-stream.ts';

let t: TestServer;
let n = 0;
beforeAll(async () => {
  t = await startTestServer({ LOCAL_LLM_WORD_DELAY_MS: '10' });
});
afterAll(async () => {
  await t.stop();
});

async function voiceSession(mode: Record<string, unknown> = {}, audio: Record<string, unknown> = { sr: 16000 }) {
  n += 1;
  return startSession(t.wsUrl, { session_id: `vt-${n}`, api_key: t.key, mode: { kind: 'service', greeting: false, ...mode }, audio });
}

const audioMs = (client: WsTestClient, bytesPerSample: number, rate: number) =>
  (client.audio.reduce((sum, b) => sum + b.length, 0) / bytesPerSample / rate) * 1000;

describe('voice turn-taking', () => {
  it('keeps a 220 ms pause inside a sentence in one turn', async () => {
    const { client } = await voiceSession();
    await streamRealtime(client, concat(roomTone(200), loadFixture('order-pause.wav'), roomTone(1000)));
    const asr = await client.waitFor('asr', () => true, 8000);
    expect(asr.text).toBe('i would like to order a large pizza with mushrooms');
    await client.waitFor('done', (f) => f.turn_id === asr.turn_id, 15000);
    expect(client.all('asr')).toHaveLength(1);
    client.assertProtocol();
    client.close();
  });

  it('ignores a noise burst and a click: no turn, no transcript', async () => {
    const { client } = await voiceSession();
    await streamRealtime(client, concat(roomTone(200), loadFixture('noise.wav'), roomTone(400), loadFixture('click.wav'), roomTone(800)));
    await new Promise((r) => setTimeout(r, 800));
    expect(client.all('asr')).toHaveLength(0);
    expect(client.all('turn')).toHaveLength(0);
    client.close();
  });

  it('warns about a digitally silent microphone without ending the session', async () => {
    const { client } = await voiceSession();
    await streamRealtime(client, silence(3300));
    const warning = await client.waitFor('silent_mic', () => true, 2000);
    expect(warning).toMatchObject({ reason: 'digital_silence', peak: 0 });
    expect(warning.duration_ms).toBeGreaterThanOrEqual(3000);
    // Still alive: a spoken turn works afterwards.
    await streamRealtime(client, concat(loadFixture('twelve.wav'), roomTone(900)));
    expect((await client.waitFor('asr', () => true, 8000)).text).toBe('what is twelve times seven');
    client.assertProtocol();
    client.close();
  });

  it('speaks the greeting in the requested downlink format (pcm_f32le at 24 kHz) from 48 kHz uplink', async () => {
    const { client, ready } = await voiceSession({ greeting: 'Welcome to the test.' }, { sr: 48000, output_encoding: 'pcm_f32le', output_sr: 24000 });
    expect(ready.audio).toEqual({ output_encoding: 'pcm_f32le', output_sr: 24000 });
    const turn = await client.waitFor('turn', (f) => f.welcome === true);
    const done = await client.waitFor('done', (f) => f.turn_id === turn.turn_id, 10000);
    expect(done.status).toBe('completed');
    for (const frame of client.audio) expect(frame.length % 4).toBe(0);
    // "Welcome to the test." is roughly a second of speech.
    expect(audioMs(client, 4, 24000)).toBeGreaterThan(700);
    await streamRealtime(client, concat(loadFixture('twelve.wav', 48000), roomTone(900, 48000)), 48000);
    expect((await client.waitFor('asr', () => true, 8000)).text).toBe('what is twelve times seven');
    client.assertProtocol();
    client.close();
  });

  it('paces downlink audio in real time, 20 ms frames', async () => {
    const { client } = await voiceSession({ greeting: 'This greeting is long enough to measure the pacing of the downlink audio stream.' });
    const turn = await client.waitFor('turn');
    const firstAudioAt = await waitAudio(client);
    await client.waitFor('done', (f) => f.turn_id === turn.turn_id, 15000);
    const elapsed = performance.now() - firstAudioAt;
    const sent = audioMs(client, 2, 16000);
    for (const frame of client.audio) expect(frame.length).toBe(640);
    // Real-time pacing: sending takes about as long as the audio lasts (less the 60 ms lead).
    expect(elapsed).toBeGreaterThan(sent - 200);
    client.close();
  });

  it('barge-in stops the reply, then playback_stopped truncates it to what was heard', async () => {
    const { client } = await voiceSession();
    client.send({ type: 'inject_context', message_id: 'm1', role: 'user', text: `say ${'one two three four five six seven eight nine ten. '.repeat(4)}` });
    const ack = await client.waitFor('inject_context_ack');
    const turnId = ack.turn_id!;
    await waitAudio(client);
    await new Promise((r) => setTimeout(r, 1500));
    const before = client.audio.length;
    const speech = concat(loadFixture('name.wav'), roomTone(900));
    void streamRealtime(client, speech);
    const interrupted = await client.waitFor('interrupted', (f) => f.turn_id === turnId, 5000);
    expect(interrupted).toMatchObject({ clear: true, barge_seq: 1 });
    const done = await client.waitFor('done', (f) => f.turn_id === turnId);
    expect(done.status).toBe('interrupted');
    const audioAtInterrupt = client.audio.length;
    await new Promise((r) => setTimeout(r, 200));
    // The downlink stopped at once: at most a frame in flight after interrupted.
    expect(client.audio.length - audioAtInterrupt).toBeLessThanOrEqual(1);
    expect(audioAtInterrupt).toBeGreaterThan(before);
    const first = client.all('utterance').find((u) => u.turn_id === turnId && !u.corrected)!;
    client.send({ type: 'client_event', event: 'playback_stopped', remaining_ms: 1000, barge_seq: 1 });
    const corrected = await client.waitFor('utterance', (u) => u.turn_id === turnId && u.corrected);
    expect(corrected.barge_seq).toBe(1);
    expect(corrected.text.length).toBeLessThan(first.text.length);
    expect(first.text.startsWith(corrected.text)).toBe(true);
    // The user's barge-in turn is answered next.
    const asr = await client.waitFor('asr', (f) => f.input_source === 'voice', 8000);
    expect(asr.text).toBe('my name is robert');
    client.assertProtocol();
    client.close();
  });
});

async function waitAudio(client: WsTestClient, timeoutMs = 8000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (client.audio.length === 0) {
    if (performance.now() > deadline) throw new Error('no audio');
    await new Promise((r) => setTimeout(r, 5));
  }
  return performance.now();
}
