import { describe, expect, it } from 'vitest';
import { rmsDbfs } from './pcm.ts';
import { createSileroFactory } from './silero-vad.ts';
import { concat, hiss, loadFixture, roomTone, silence } from './testing/audio-stream.ts';
import { endpointEvents } from './testing/vad-frames.ts';
import { OnsetWindow } from './speech-onset.ts';
import { UnvoicedOnset } from './unvoiced-onset.ts';
import { VAD_FRAME_SAMPLES } from './vad.ts';

/** The detector's answer for each 20 ms frame of `audio`, as a string ('h' hiss, '.' not). */
function marks(audio: Int16Array, detector = new UnvoicedOnset()): string {
  let out = '';
  for (let i = 0; i + VAD_FRAME_SAMPLES <= audio.length; i += VAD_FRAME_SAMPLES) out += detector.push(audio.subarray(i, i + VAD_FRAME_SAMPLES)) ? 'h' : '.';
  return out;
}

function sine(hz: number, ms: number, amplitude: number): Int16Array {
  return Int16Array.from({ length: (16 * ms) | 0 }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / 16000)));
}

describe('hiss outside speech (a fricative start)', () => {
  it('marks a run of hiss from its second frame in a row to its eighth frame, then rests until 500 ms without hiss', () => {
    expect(rmsDbfs(hiss(200))).toBeGreaterThan(-30);
    expect(marks(concat(roomTone(100), hiss(400), roomTone(600), hiss(100)))).toBe('.....' + '.hhhhhhh' + '.'.repeat(12 + 30) + '.hhhh');
    // Resting: 100 ms of room after the run is not enough; a segment's start (reset) rearms it.
    const detector = new UnvoicedOnset();
    expect(marks(concat(roomTone(100), hiss(400), roomTone(100), hiss(100)), detector)).toBe('.....' + '.hhhhhhh' + '.'.repeat(12 + 5 + 5));
    detector.reset();
    expect(marks(concat(roomTone(100), hiss(100)), detector)).toBe('.....' + '.hhhh');
  });

  it('hiss that comes and goes counts within its first run only: one pause of at most 200 ms', () => {
    for (const pattern of ['hh....'.repeat(10), 'hh.....'.repeat(10), 'h.h.hh...h'.repeat(6), 'hhh.'.repeat(15)]) {
      const detector = new UnvoicedOnset();
      const window = new OnsetWindow();
      const steps: Array<[string, number]> = [];
      marks(roomTone(200), detector);
      [...pattern].forEach((c, i) => {
        const step = window.push(false, 3, detector.push(c === 'h' ? hiss(20) : roomTone(20)));
        if (step) steps.push([step, i]);
      });
      expect(steps.map(([step]) => step), pattern).toEqual(['onset', 'dropped']);
      expect(steps[1]![1] - steps[0]![1], pattern).toBeLessThanOrEqual(10);
    }
  });

  it('never marks a lone frame, a tone (even a high one that crosses zero as often), a cough, a click, voiced speech or the room', () => {
    expect(marks(concat(roomTone(100), hiss(20), roomTone(100), hiss(20), roomTone(100)))).not.toContain('h');
    const lone = [...'.h..h.h...h.h.'].map((c) => (c === 'h' ? hiss(20) : roomTone(20)));
    expect(marks(concat(roomTone(200), ...lone))).not.toContain('h');
    expect(rmsDbfs(sine(6000, 200, 3000))).toBeGreaterThan(-30);
    for (const hz of [440, 3000, 6000]) expect(marks(concat(roomTone(100), sine(hz, 400, 3000)))).not.toContain('h');
    for (const clip of ['cough.wav', 'click.wav', 'tone.wav', 'okay.wav', 'yeah.wav', 'near-silent.wav']) expect(marks(loadFixture(clip)), clip).not.toContain('h');
  });

  it('hears hiss against the room it is in: not 10 dB over a loud room, and a steady hiss becomes the room', () => {
    // A room of white noise at −40 dBFS is itself hiss where it starts, from digital silence.
    const loud = new UnvoicedOnset();
    expect(marks(roomTone(1000, 16000, 600), loud)).toMatch(/^\.h{7}\.+$/);
    expect(marks(hiss(200, 1200), loud)).not.toContain('h');
    const quiet = new UnvoicedOnset();
    expect(marks(roomTone(1000), quiet)).not.toContain('h');
    expect(marks(hiss(200, 1200), quiet)).toBe('.hhhhhhh..');
    // Quieter than −50 dBFS is never hiss, even in digital silence.
    expect(rmsDbfs(hiss(200, 80))).toBeLessThan(-50);
    expect(marks(hiss(200, 80))).not.toContain('h');
    // A muted track's digital silence leaves the floor where the room had it.
    const muted = new UnvoicedOnset();
    marks(roomTone(1000, 16000, 320), muted);
    expect(rmsDbfs(roomTone(1000, 16000, 320))).toBeGreaterThan(-50);
    expect(marks(concat(silence(100), roomTone(3000, 16000, 320), silence(60), roomTone(3000, 16000, 320)), muted)).not.toContain('h');
    // After 10 s of hiss, the same hiss again after a short break is the room's sound, not an onset.
    const detector = new UnvoicedOnset();
    marks(hiss(10_000, 400), detector);
    expect(marks(concat(roomTone(200, 16000, 400), hiss(200, 400)), detector)).not.toContain('h');
  });

  it('through the endpointer and Silero: hiss before a voice opens the onset at its second frame and the voice keeps it; hiss alone is dropped', async () => {
    const vad = await createSileroFactory();
    const events = (clip: Int16Array) => endpointEvents(vad, clip);
    const okay = loadFixture('okay.wav');
    const plain = await events(okay);
    const fricative = await events(concat(hiss(120), okay));
    expect(fricative.speech_onset).toEqual([20]);
    expect(fricative.onset_dropped).toBeUndefined();
    // Alone, the voice's onset leads its segment by two frames; after hiss, by the hiss and more.
    expect(plain.speech_start![0]! - plain.speech_onset![0]!).toBe(40);
    expect(fricative.speech_start![0]! - fricative.speech_onset![0]!).toBeGreaterThanOrEqual(120);
    // Eight frames of hiss, then four with none: 200 ms from the onset to the drop.
    expect(await events(hiss(400))).toEqual({ speech_onset: [20], onset_dropped: [220] });
  });
});
