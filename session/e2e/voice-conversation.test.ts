import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../signaling/testing/test-server.ts';
import { startSession } from '../../signaling/testing/ws-test-client.ts';
import { concat, loadFixture, roomTone, streamRealtime } from '../../media/testing/audio-stream.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ LOCAL_LLM_WORD_DELAY_MS: '10' });
});
afterAll(async () => {
  await t.stop();
});

const voiceStart = (extra: Record<string, unknown> = {}) => ({
  session_id: 'voice-1',
  api_key: t.key,
  mode: { kind: 'service', greeting: false, ...extra },
  audio: { sr: 16000 },
});

describe('voice conversation over WebSocket', () => {
  it('hears a spoken question, answers in text and paced audio', async () => {
    const { client, ready } = await startSession(t.wsUrl, voiceStart());
    expect(ready.audio).toEqual({ output_encoding: 'pcm16', output_sr: 16000 });
    await streamRealtime(client, concat(roomTone(300), loadFixture('twelve.wav'), roomTone(1200)));
    const asr = await client.waitFor('asr', () => true, 8000);
    expect(asr.input_source).toBe('voice');
    expect(asr.text).toBe('what is twelve times seven');
    const done = await client.waitFor('done', (f) => f.turn_id === asr.turn_id, 15000);
    expect(done.status).toBe('completed');
    const types = client.turnTypes(asr.turn_id!);
    expect(types[0]).toBe('asr');
    expect(types[1]).toBe('turn');
    expect(types.at(-1)).toBe('done');
    expect(types.at(-2)).toBe('utterance');
    const utterance = client.all('utterance').find((u) => u.turn_id === asr.turn_id)!;
    expect(utterance.text).toContain('84');
    const bytes = client.audio.reduce((n, b) => n + b.length, 0);
    expect(bytes).toBeGreaterThan(16000 * 2 * 0.5);
    client.assertProtocol();
    client.close();
  });
});
