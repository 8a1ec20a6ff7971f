import { describe, expect, it } from 'vitest';
import { endpointerOptions } from '../../media/endpointer.ts';
import type { VadFactory } from '../../media/vad.ts';
import type { SpeechToText } from '../providers/asr.ts';
import { VoiceInput } from './voice-input.ts';

/** A detector that hears nothing and keeps every frame it was shown. */
function recordingVad(): { vad: VadFactory; frames: Int16Array[] } {
  const frames: Int16Array[] = [];
  const vad: VadFactory = {
    provider: 'webrtc',
    create: (onDecision) => ({
      pending: 0,
      push: (frame) => {
        frames.push(frame);
        onDecision(frame, false);
      },
      free: () => undefined,
    }),
  };
  return { vad, frames };
}

const noAsr: SpeechToText = {
  name: 'none',
  open: () => {
    throw new Error('no speech in this test');
  },
};
const events = { onSoundOnset() {}, onOnsetDropped() {}, onSpeechStart() {}, onSpeechConfirmed() {}, onSpeechSustained() {}, onProbe() {}, onSpeechResumed() {}, onNoise() {}, onTurnEnd() {}, onSilentMic() {} };

const ramp = (n: number, from = 0): Int16Array => Int16Array.from({ length: n }, (_, i) => from + i);
const bytes = (samples: Int16Array): Uint8Array => new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);

describe('VoiceInput framing', () => {
  it('hands whole 20 ms frames that arrived together to the detector as views, without copying', () => {
    const { vad, frames } = recordingVad();
    const input = new VoiceInput(16000, endpointerOptions(), vad, noAsr, events);
    const wire = bytes(ramp(960));
    input.pushBytes(wire);
    expect(frames).toHaveLength(3);
    expect(frames.every((f) => f.length === 320 && f.buffer === wire.buffer)).toBe(true);
    expect(frames.flatMap((f) => Array.from(f))).toEqual(Array.from(ramp(960)));
    input.close();
  });

  it('cuts audio that arrives in other sizes into the same frames, in order', () => {
    const { vad, frames } = recordingVad();
    const input = new VoiceInput(16000, endpointerOptions(), vad, noAsr, events);
    const all = ramp(1000);
    // 150, then 500 (finishes a frame and holds a whole one), then the rest.
    for (const [from, to] of [[0, 150], [150, 650], [650, 1000]] as const) input.pushSamples(all.slice(from, to));
    expect(frames.map((f) => f.length)).toEqual([320, 320, 320]);
    expect(frames.flatMap((f) => Array.from(f))).toEqual(Array.from(all.subarray(0, 960)));
    input.close();
  });
});
