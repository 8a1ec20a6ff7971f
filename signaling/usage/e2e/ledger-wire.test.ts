import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone, streamRealtime } from '../../../media/testing/audio-stream.ts';
import { sid, voiceStart, WAIT_MS } from '../../testing/conversation.ts';
import { startTestServer, type TestServer } from '../../testing/test-server.ts';
import { WsTestClient } from '../../testing/ws-test-client.ts';

/**
 * The ledger against the wire: a voice conversation (local recogniser and voice, real sockets)
 * whose audio bytes are counted by the client both ways, and whose wall time the client clocks;
 * the ledger's audio_in_s, audio_out_s and session_s must agree within 1 %. Two formats: the
 * defaults, and 48 kHz up with 32-bit float at 24 kHz down.
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ LOCAL_LLM_WORD_DELAY_MS: '10' });
});
afterAll(() => t.stop());

type Format = {
  sr: number;
  output_encoding: 'pcm16' | 'pcm_f32le';
  output_sr: number;
};

async function converse(format: Format): Promise<{ sessionId: string; upS: number; downS: number; wallS: number; turns: number }> {
  const sessionId = sid('wire');
  const client = await WsTestClient.open(t.wsUrl);
  const openedAt = performance.now();
  // The greeting is spoken (audio out before any audio in), then one question and its answer.
  client.send({ type: 'start', ...voiceStart(sessionId, {}, format), api_key: t.key });
  const ready = await client.waitFor('ready');
  await client.waitFor('done', () => true, 15_000);
  const question = concat(roomTone(300, format.sr), loadFixture('twelve.wav', format.sr), roomTone(1200, format.sr));
  await streamRealtime(client, question, format.sr);
  const asr = await client.waitFor('asr', () => true, 15_000);
  await client.waitFor('done', (f) => f.turn_id === asr.turn_id, 15_000);
  client.close();
  await client.waitClose(WAIT_MS);
  const wallS = (performance.now() - openedAt) / 1000;
  client.assertProtocol();
  expect(ready.audio).toEqual({ output_encoding: format.output_encoding, output_sr: format.output_sr });
  const bytesPerSample = format.output_encoding === 'pcm16' ? 2 : 4;
  const down = client.audio.reduce((n, b) => n + b.length, 0);
  return { sessionId, upS: (question.length * 2) / (2 * format.sr), downS: down / (bytesPerSample * format.output_sr), wallS, turns: client.all('done').length };
}

describe('usage ledger vs what was streamed', () => {
  it('audio in, audio out and wall time agree with the wire within 1 %, in two formats', async () => {
    const formats: Format[] = [
      { sr: 16000, output_encoding: 'pcm16', output_sr: 16000 },
      { sr: 48000, output_encoding: 'pcm_f32le', output_sr: 24000 },
    ];
    const wires = await Promise.all(formats.map(converse));
    await t.server.context.usage.writer.flush();
    for (const wire of wires) {
      const { body } = await fetch(`${t.url}/api/v1/usage?session_id=${wire.sessionId}`, { headers: { authorization: `Bearer ${t.key}` } }).then(async (r) => ({ body: await r.json() }));
      const [ledger] = body.sessions;
      expect(ledger.turns).toBe(wire.turns);
      expect(wire.upS).toBeGreaterThan(2);
      expect(wire.downS).toBeGreaterThan(2);
      expect(Math.abs(ledger.audio_in_s - wire.upS) / wire.upS, `audio_in_s ${ledger.audio_in_s} vs ${wire.upS} on the wire`).toBeLessThan(0.01);
      expect(Math.abs(ledger.audio_out_s - wire.downS) / wire.downS, `audio_out_s ${ledger.audio_out_s} vs ${wire.downS}`).toBeLessThan(0.01);
      // Nothing was cut: all that was sent was heard.
      expect(ledger.audio_heard_s).toBe(ledger.audio_out_s);
      // The session lives inside the client's clock (start sent → close seen): at most that, less by under 1 %.
      expect(ledger.session_s).toBeLessThanOrEqual(wire.wallS);
      expect((wire.wallS - ledger.session_s) / wire.wallS, `session_s ${ledger.session_s} vs ${wire.wallS}`).toBeLessThan(0.01);
      // Recognition heard the utterance (not the greeting's silence): some seconds, less than was sent.
      expect(ledger.asr_s).toBeGreaterThan(0.5);
      expect(ledger.asr_s).toBeLessThanOrEqual(ledger.audio_in_s);
      expect(ledger.tts_chars).toBeGreaterThan(20);
    }
  }, 60_000);
});
