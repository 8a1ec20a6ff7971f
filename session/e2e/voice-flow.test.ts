import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../signaling/testing/test-server.ts';
import { startSession } from '../../signaling/testing/ws-test-client.ts';
import { concat, loadFixture, roomTone, streamRealtime } from '../../media/testing/audio-stream.ts';
import { sid } from '../../signaling/testing/conversation.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ LOCAL_LLM_WORD_DELAY_MS: '10', END_CALL_GRACE_MS: '1500' });
});
afterAll(async () => {
  await t.stop();
});

const voice = (mode: Record<string, unknown>) =>
  startSession(t.wsUrl, { session_id: sid('flow'), api_key: t.key, mode: { kind: 'service', greeting: false, ...mode }, audio: { sr: 16000 } });

describe('eager replies (mode.flow)', () => {
  it('starts a reply during a long pause and retracts it with canceled when the user goes on', async () => {
    // Threshold 0.05: the turn ends after 740 ms of silence; the eager reply may start at 370 ms.
    // A statement first: a complete question would shorten the wait (lexical cue) below 700 ms.
    const { client } = await voice({ flow: true, turn_end_threshold: 0.05 });
    await streamRealtime(client, concat(roomTone(200), loadFixture('name.wav'), roomTone(700), loadFixture('twelve.wav'), roomTone(1500)));
    const canceled = await client.waitFor('canceled', () => true, 8000).catch((e) => { console.log(JSON.stringify(client.all("asr"))); throw e; });
    const eagerAsr = client.all('asr').find((a) => a.turn_id === canceled.turn_id)!;
    expect(eagerAsr.text).toBe('my name is robert');
    expect((await client.waitFor('done', (d) => d.turn_id === canceled.turn_id)).status).toBe('canceled');
    // The whole utterance is transcribed again and answered once.
    const final = await client.waitFor('asr', (a) => a.turn_id !== canceled.turn_id, 8000);
    expect(final.text).toBe('my name is robert what is twelve times seven');
    await client.waitFor('done', (d) => d.turn_id === final.turn_id, 15000);
    client.assertProtocol();
    client.close();
  });

  it('commits the eager reply when the user stays silent: one answer, no canceled', async () => {
    const { client } = await voice({ flow: true });
    await streamRealtime(client, concat(roomTone(200), loadFixture('twelve.wav'), roomTone(1200)));
    const asr = await client.waitFor('asr', () => true, 8000);
    await client.waitFor('done', (d) => d.turn_id === asr.turn_id, 15000);
    expect(client.all('canceled')).toHaveLength(0);
    expect(client.all('asr')).toHaveLength(1);
    client.close();
  });
});

describe('voice endings and warnings', () => {
  it('warns near_silent for a live but useless microphone', async () => {
    const { client } = await voice({});
    await streamRealtime(client, loadFixture('near-silent.wav'));
    const warning = await client.waitFor('silent_mic', () => true, 3000);
    expect(warning.reason).toBe('near_silent');
    expect(warning.duration_ms).toBeGreaterThanOrEqual(5000);
    expect(warning.peak).toBeGreaterThan(0);
    expect(warning.peak).toBeLessThanOrEqual(64);
    client.close();
  });

  it('end_call speaks only the farewell, then session_end_requested, then closes 1000', async () => {
    const { client } = await voice({ end_call: true });
    await streamRealtime(client, concat(roomTone(200), loadFixture('name.wav'), roomTone(900)));
    await client.waitFor('done', () => true, 10000);
    client.send({ type: 'inject_context', message_id: 'bye-1', role: 'user', text: 'goodbye' });
    const end = await client.waitFor('session_end_requested', () => true, 10000);
    expect(end.farewell).toBe('Goodbye! Talk to you soon.');
    const ack = client.all('inject_context_ack').find((a) => a.message_id === 'bye-1')!;
    const utterance = client.all('utterance').find((u) => u.turn_id === ack.turn_id)!;
    expect(utterance.text).toBe('Goodbye! Talk to you soon.');
    const closed = await client.waitClose(8000);
    expect(closed).toEqual({ code: 1000, reason: 'end_call' });
  });
});
