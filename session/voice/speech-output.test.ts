import { describe, expect, it } from 'vitest';
import { SpeechOutput } from './speech-output.ts';
import type { SpeechChunk, TextToSpeech } from '../providers/tts.ts';
import { catalogOf, FLITE_VOICES } from '../providers/voices.ts';

const RATE = 16000;

/** One second of audio per sentence, delivered at once (like a fast TTS service). */
const tts: TextToSpeech = {
  name: 'one-second',
  voices: catalogOf(FLITE_VOICES),
  async *synthesize(): AsyncIterable<SpeechChunk> {
    yield { samples: new Int16Array(RATE).fill(1000), sampleRate: RATE };
  },
};

function output(transport: { leadMs: number; sendAheadMs?: number }) {
  const sent: number[] = [];
  let discarded = 0;
  const speech = new SpeechOutput({
    tts,
    outputRate: RATE,
    encoding: 'pcm16',
    leadMs: transport.leadMs,
    ...(transport.sendAheadMs === undefined ? {} : { sendAheadMs: transport.sendAheadMs }),
    sendAudio: () => sent.push(performance.now()),
    discardAudio: () => (discarded += 1),
  });
  return { speech, sent, discards: () => discarded };
}

async function untilSent(sent: number[], frames: number): Promise<void> {
  while (sent.length < frames) await new Promise((r) => setTimeout(r, 2));
}

describe('SpeechOutput: what counts as sent at a barge-in', () => {
  it('counts everything handed to a transport that sends at once (WebSocket)', async () => {
    const { speech, sent } = output({ leadMs: 200 });
    const turn = speech.begin('v', (error) => {
      throw error;
    });
    turn.pushText('One whole sentence.');
    void turn.settle();
    await untilSent(sent, 10);
    // The 200 ms lead left at once: ten frames handed, all on the wire.
    expect(turn.stop()).toBe(sent.length * 20);
    speech.close();
  });

  it('does not count audio a pacing transport still holds (WebRTC media worker), and asks it to drop that audio', async () => {
    const { speech, sent, discards } = output({ leadMs: 200, sendAheadMs: 60 });
    const turn = speech.begin('v', (error) => {
      throw error;
    });
    turn.pushText('One whole sentence.');
    void turn.settle();
    await untilSent(sent, 10);
    const handed = sent.length * 20;
    const sentMs = turn.stop();
    // Handed 200 ms ahead of play time, but the transport only lets frames go 60 ms ahead: the
    // other 140 ms (give or take the frame being cut) never left, so it is not counted as sent.
    expect(handed).toBeGreaterThanOrEqual(200);
    expect(sentMs).toBeLessThanOrEqual(handed - 120);
    expect(sentMs).toBeGreaterThanOrEqual(handed - 160);
    expect(discards()).toBe(1);
    speech.close();
  });

  it('counts a finished reply whole: nothing is held once its play time has passed', async () => {
    const { speech, sent } = output({ leadMs: 200, sendAheadMs: 60 });
    const turn = speech.begin('v', (error) => {
      throw error;
    });
    turn.pushText('One whole sentence.');
    await turn.end();
    expect(sent.length).toBe(50);
    expect(turn.stop()).toBe(1000);
    speech.close();
  });
});
