import { describe, expect, it } from 'vitest';
import { createSileroFactory } from './silero-vad.ts';
import { OnsetWindow } from './speech-onset.ts';
import { loadFixture } from './testing/audio-stream.ts';
import { endpointEvents } from './testing/vad-frames.ts';
import { VAD_FRAME_MS, VAD_FRAME_SAMPLES } from './vad.ts';

/** Each frame's step for a string of decisions ('x' voiced, 'h' hiss, '.' neither), three of four to start. */
function steps(decisions: string): string[] {
  const window = new OnsetWindow();
  return [...decisions].map((d) => window.push(d === 'x', 3, d === 'h') ?? '-');
}

describe('speech onset (the first voiced frame outside speech)', () => {
  it('marks the first voiced frame; three voiced of four start a segment two frames later', () => {
    expect(steps('..xxx')).toEqual(['-', '-', 'onset', '-', 'start']);
    expect(steps('x.xx')).toEqual(['onset', '-', '-', 'start']);
  });

  it('drops the onset at the first frame after which no start can come next, and marks the next voiced frame again', () => {
    expect(steps('x..')).toEqual(['onset', '-', 'dropped']);
    expect(steps('x..x.x.')).toEqual(['onset', '-', 'dropped', 'onset', '-', '-', 'dropped']);
    expect(steps('x..xxx')).toEqual(['onset', '-', 'dropped', 'onset', '-', 'start']);
  });

  it('hiss opens an onset that the first voiced frame carries on, across a gap of up to three frames; after four it is dropped', () => {
    expect(steps('hhh..xxx')).toEqual(['onset', '-', '-', '-', '-', '-', '-', 'start']);
    expect(steps('h...x')).toEqual(['onset', '-', '-', '-', '-']);
    expect(steps('h....x')).toEqual(['onset', '-', '-', '-', 'dropped', 'onset']);
    expect(steps('hh....')).toEqual(['onset', '-', '-', '-', '-', 'dropped']);
    // Carried on, the voiced frame is the onset's frame: dropped as a voiced onset is.
    expect(steps('hx..')).toEqual(['onset', '-', '-', 'dropped']);
    // Hiss within an open voiced onset changes nothing.
    expect(steps('xh.')).toEqual(['onset', '-', 'dropped']);
  });

  it('reports the voiced frames that started the segment, and starts afresh after it', () => {
    const window = new OnsetWindow();
    for (const d of 'xxx') window.push(d === 'x', 3);
    expect(window.voiced).toBe(3);
    expect(window.push(true, 3)).toBe('onset');
  });

  it('the endpointer says it two frames before speech_start on real speech (Silero), and never for a cough or a click', async () => {
    const vad = await createSileroFactory();
    const events = (clip: Int16Array) => endpointEvents(vad, clip);
    for (const clip of ['name.wav', 'okay.wav', 'weather.wav']) {
      const at = await events(loadFixture(clip));
      expect(at.speech_start).toHaveLength(1);
      expect(at.speech_onset![0]).toBe(at.speech_start![0]! - 2 * VAD_FRAME_MS);
    }
    for (const clip of ['cough.wav', 'click.wav', 'tone.wav']) expect(await events(loadFixture(clip))).toEqual({});
    // 20 ms of a vowel: two voiced frames, dropped three frames after the onset.
    const vowel = loadFixture('name.wav').slice(400 * 16, 400 * 16 + VAD_FRAME_SAMPLES);
    const blip = await events(vowel);
    expect(Object.keys(blip).sort()).toEqual(['onset_dropped', 'speech_onset']);
    expect(blip.onset_dropped![0]! - blip.speech_onset![0]!).toBe(3 * VAD_FRAME_MS);
  });
});
