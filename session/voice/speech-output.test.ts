import { describe, expect, it } from 'vitest';
import { useFakeClock } from '../testing/test-session.ts';
import { SpeechOutput } from './speech-output.ts';
import type { SpeechChunk, TextToSpeech } from '../providers/tts.ts';
import { catalogOf, FLITE_VOICES } from '../providers/voices.ts';

const RATE = 16000;

useFakeClock();

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
  let waiting: (() => void) | undefined;
  let discarded = 0;
  const speech = new SpeechOutput({
    tts,
    outputRate: RATE,
    encoding: 'pcm16',
    leadMs: transport.leadMs,
    ...(transport.sendAheadMs === undefined ? {} : { sendAheadMs: transport.sendAheadMs }),
    sendAudio: () => {
      sent.push(performance.now());
      waiting?.();
    },
    discardAudio: () => (discarded += 1),
  });
  /** Resolves once `frames` frames were handed over (on the frame's arrival). */
  const untilSent = (frames: number): Promise<void> =>
    new Promise((resolve) => {
      waiting = () => {
        if (sent.length < frames) return;
        waiting = undefined;
        resolve();
      };
      waiting();
    });
  return { speech, sent, untilSent, discards: () => discarded };
}

describe('SpeechOutput: what counts as sent at a barge-in', () => {
  it('counts everything handed to a transport that sends at once (WebSocket)', async () => {
    const { speech, sent, untilSent } = output({ leadMs: 200 });
    const turn = speech.begin('v', (error) => {
      throw error;
    });
    turn.pushText('One whole sentence.');
    void turn.settle();
    await untilSent(10);
    // The 200 ms lead left at once: ten frames handed, all on the wire.
    expect(turn.stop()).toBe(sent.length * 20);
    speech.close();
  });

  it('does not count audio a pacing transport still holds (WebRTC media worker), and asks it to drop that audio', async () => {
    const { speech, sent, untilSent, discards } = output({ leadMs: 200, sendAheadMs: 60 });
    const turn = speech.begin('v', (error) => {
      throw error;
    });
    turn.pushText('One whole sentence.');
    void turn.settle();
    await untilSent(10);
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

describe('SpeechOutput: pacing', () => {
  it('sends 20 ms frames in real time after the lead: one second of speech takes a second less the lead', async () => {
    const { speech, sent } = output({ leadMs: 60 });
    const turn = speech.begin('v', (error) => {
      throw error;
    });
    turn.pushText('One whole sentence.');
    await turn.end();
    expect(sent.length).toBe(50);
    // The first 60 ms leave at once; every later frame leaves on its own 20 ms slot.
    expect(sent.at(-1)! - sent[0]!).toBeGreaterThanOrEqual(1000 - 60 - 20 - 5);
    expect(sent.at(-1)! - sent[0]!).toBeLessThanOrEqual(1000 - 60 - 20 + 5);
    const gaps = sent.slice(4).map((t, i) => t - sent[i + 3]!);
    for (const gap of gaps) expect(gap).toBeCloseTo(20, 0);
    speech.close();
  });
});
