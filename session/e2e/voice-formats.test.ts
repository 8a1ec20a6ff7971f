import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../signaling/testing/test-server.ts';
import { startSession, type WsTestClient } from '../../signaling/testing/ws-test-client.ts';
import { concat, loadFixture, roomTone, streamRealtime } from '../../media/testing/audio-stream.ts';

/**
 * Audio formats on the wire with the offline speech providers: the uplink at audio.sr and the
 * downlink in output_encoding at output_sr. Turn-taking itself: session/voice/voice-controller.test.ts.
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ LOCAL_LLM_WORD_DELAY_MS: '10' });
});
afterAll(async () => {
  await t.stop();
});

const audioMs = (client: WsTestClient, bytesPerSample: number, rate: number) =>
  (client.audio.reduce((sum, b) => sum + b.length, 0) / bytesPerSample / rate) * 1000;

describe('voice audio formats', () => {
  it('speaks the greeting in the requested downlink format (pcm_f32le at 24 kHz) and hears a 48 kHz uplink', async () => {
    const { client, ready } = await startSession(t.wsUrl, {
      session_id: 'vf-1',
      api_key: t.key,
      mode: { kind: 'service', greeting: 'Welcome to the test.' },
      audio: { sr: 48000, output_encoding: 'pcm_f32le', output_sr: 24000 },
    });
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
});
