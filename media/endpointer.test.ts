import { describe, expect, it } from 'vitest';
import { Endpointer, endpointerOptions, silenceMsForThreshold } from './endpointer.ts';
import { rmsDbfs } from './pcm.ts';
import { VAD_FRAME_SAMPLES, VoiceActivityDetector } from './vad.ts';
import { concat, loadFixture, roomTone, silence } from './testing/audio-stream.ts';

/** Runs a clip (with room tone around it) through the real VAD and the endpointer. */
async function endsAfterSpeech(clip: Int16Array, threshold?: number): Promise<number[]> {
  const vad = await VoiceActivityDetector.create(3);
  const endpointer = new Endpointer(endpointerOptions(threshold));
  const audio = concat(roomTone(300), clip, roomTone(1500));
  const speechEndMs = 300 + clip.length / 16;
  const ends: number[] = [];
  for (let i = 0; i + VAD_FRAME_SAMPLES <= audio.length; i += VAD_FRAME_SAMPLES) {
    const frame = audio.subarray(i, i + VAD_FRAME_SAMPLES);
    for (const event of endpointer.push(frame, vad.isSpeech(frame), rmsDbfs(frame))) {
      if (event.type === 'turn_end') ends.push((i + VAD_FRAME_SAMPLES) / 16 - speechEndMs);
    }
  }
  vad.free();
  return ends;
}

describe('endpointer', () => {
  it('maps turn_end_threshold monotonically onto trailing silence (lower waits longer)', () => {
    expect(silenceMsForThreshold(0.05)).toBe(740);
    expect(silenceMsForThreshold()).toBe(260);
    expect(silenceMsForThreshold(0.5)).toBe(200);
    for (let k = 1; k < 10; k += 1) expect(silenceMsForThreshold(k / 20)).toBeGreaterThan(silenceMsForThreshold((k + 1) / 20));
  });

  it.each(['twelve.wav', 'weather.wav', 'name.wav', 'story.wav'])('at the default, %s ends within 300 ms of the end of speech', async (name) => {
    const ends = await endsAfterSpeech(loadFixture(name));
    expect(ends).toHaveLength(1);
    expect(ends[0]).toBeGreaterThanOrEqual(250);
    expect(ends[0]).toBeLessThanOrEqual(300);
  });

  it('at the default, a 220 ms pause inside a sentence does not end the turn', async () => {
    expect(await endsAfterSpeech(loadFixture('order-pause.wav'))).toHaveLength(1);
  });

  it('waits longer at 0.05 and shorter at 0.5', async () => {
    const [slow] = await endsAfterSpeech(loadFixture('twelve.wav'), 0.05);
    const [fast] = await endsAfterSpeech(loadFixture('twelve.wav'), 0.5);
    expect(slow).toBeGreaterThan(700);
    expect(fast).toBeLessThan(260);
  });

  it('digital silence after speech ends the turn the same way', async () => {
    const vad = await VoiceActivityDetector.create(3);
    const endpointer = new Endpointer(endpointerOptions());
    const audio = concat(silence(200), loadFixture('name.wav'), silence(1000));
    let ended = 0;
    for (let i = 0; i + VAD_FRAME_SAMPLES <= audio.length; i += VAD_FRAME_SAMPLES) {
      const frame = audio.subarray(i, i + VAD_FRAME_SAMPLES);
      ended += endpointer.push(frame, vad.isSpeech(frame), rmsDbfs(frame)).filter((e) => e.type === 'turn_end').length;
    }
    expect(ended).toBe(1);
    vad.free();
  });
});
