import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFvadFactory } from '../../media/fvad-vad.ts';
import { concat, loadFixture, roomTone, streamRealtime } from '../../media/testing/audio-stream.ts';
import { clipTranscriber, FakeSpeechToText, FakeTextToSpeech } from '../../session/testing/fake-speech.ts';
import { DEFAULT_BARGE_IN } from '../../session/voice/barge-in.ts';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
import { startSession } from '../testing/ws-test-client.ts';

/**
 * The end-of-turn recheck reads the recogniser's last-word posterior and sentence-end
 * probability through everything the server puts between the session and its recogniser (the
 * provider telemetry, the usage meter). Twice a wrapper there dropped a recogniser's optional
 * methods and turned an end-of-turn rule off on every server while the session's own tests,
 * which build no server, stayed green. Here each reading alone must hold a pause that the
 * words alone would end: one turn, over a real socket.
 */

// pause-and.wav: words, about 700 ms of silence from 2.48 s, then more words. Cut in the middle
// of the silence; the recogniser hears a whole sentence before it, so only a reading holds it.
const clip = loadFixture('pause-and.wav');
const CUT = 142 * 320;
const SURE = 'i would like a table for two';
const AFTER = 'a window seat please';

/** What the recogniser reports at the recheck; each test sets them (the tests run one at a time). */
const readings = { posterior: 0.9, sentenceEnd: 0.9 };

let t: TestServer;
beforeAll(async () => {
  const heard = clipTranscriber({ [SURE]: clip.subarray(0, CUT), [AFTER]: clip.subarray(CUT) });
  const stt = new FakeSpeechToText(heard, { partials: true, posterior: () => readings.posterior, sentenceEnd: () => readings.sentenceEnd });
  t = await startTestServer({}, { voice: { ok: true, stt, tts: new FakeTextToSpeech(), vad: await createFvadFactory(3), bargeIn: DEFAULT_BARGE_IN } });
});
afterAll(async () => {
  await t.stop();
});

async function transcripts(): Promise<string[]> {
  const { client } = await startSession(t.wsUrl, { session_id: `recheck-${Math.random()}`, api_key: t.key, mode: { kind: 'service', greeting: false }, audio: { sr: 16000 } });
  await streamRealtime(client, concat(roomTone(200), clip, roomTone(1600)));
  // The whole audio has gone out: a held pause has had its one transcript by then.
  const asr = await client.waitFor('asr', () => true, 8000);
  if (asr.text === SURE) await client.waitFor('asr', (f) => f.turn_id !== asr.turn_id, 8000);
  const texts = client.all('asr').map((f) => f.text ?? '');
  client.close();
  return texts;
}

describe('end-of-turn recheck through the server', () => {
  // A likely sentence end (≥ 0.2) would settle the doubt, an unlikely one (< 0.1) hold on its own.
  it('a doubted last word (posterior under the floor) holds the pause: one turn', async () => {
    Object.assign(readings, { posterior: 0.05, sentenceEnd: 0.15 });
    expect(await transcripts()).toEqual([`${SURE} ${AFTER}`]);
  }, 30_000);

  it('words a sentence seldom ends on (low sentence-end probability) hold the pause: one turn', async () => {
    Object.assign(readings, { posterior: 0.9, sentenceEnd: 0.01 });
    expect(await transcripts()).toEqual([`${SURE} ${AFTER}`]);
  }, 30_000);

  it('sure words a sentence ends on end the turn at the pause: two turns', async () => {
    Object.assign(readings, { posterior: 0.9, sentenceEnd: 0.9 });
    expect(await transcripts()).toEqual([SURE, AFTER]);
  }, 30_000);
});
