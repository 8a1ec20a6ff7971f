import { describe, expect, it } from 'vitest';
import { FvadClassifier, loadFvad } from './fvad-vad.ts';
import { QUIET_HANGOVER, QUIET_PEAK, QuietGate, quietWindow } from './silero-gate.ts';
import type { SileroJob } from './silero-model.ts';
import { createSileroFactory, sileroDetectors } from './silero-vad.ts';
import { concat, loadFixture, roomTone } from './testing/audio-stream.ts';
import { vadFrames } from './testing/vad-frames.ts';
import { VAD_FRAME_SAMPLES } from './vad.ts';

const fvad = await loadFvad();

/** A model answering each window at once with what the test says, counting the windows it ran. */
class ScriptedModel {
  runs = 0;
  constructor(public probability: number) {}
  submit(job: SileroJob): void {
    this.runs += 1;
    job.done(this.probability);
  }
}

function frames(audio: Int16Array): Int16Array[] {
  return Array.from({ length: Math.floor(audio.length / VAD_FRAME_SAMPLES) }, (_, i) => audio.slice(i * VAD_FRAME_SAMPLES, (i + 1) * VAD_FRAME_SAMPLES));
}

describe('Silero quiet gate: what counts as quiet', () => {
  it('a window is quiet when no sample, context included, passes ±QUIET_PEAK', () => {
    const w = new Int16Array(576);
    expect(quietWindow(w)).toBe(true);
    expect(quietWindow(roomTone(36))).toBe(true);
    w[0] = -QUIET_PEAK;
    w[575] = QUIET_PEAK;
    expect(quietWindow(w)).toBe(true);
    w[3] = QUIET_PEAK + 1;
    expect(quietWindow(w)).toBe(false);
    w[3] = -QUIET_PEAK - 1;
    expect(quietWindow(w)).toBe(false);
  });

  it('skips only after QUIET_HANGOVER quiet windows in a row and while the last answer was no speech', () => {
    const gate = new QuietGate();
    const run = (n: number, quiet: boolean, speaking: boolean): boolean[] => Array.from({ length: n }, () => gate.skips(quiet, speaking));
    expect(run(QUIET_HANGOVER, true, false)).toEqual(Array(QUIET_HANGOVER).fill(false));
    expect(run(3, true, false)).toEqual([true, true, true]);
    // Speech still on (the network's state carries it into silence): the network runs.
    expect(run(2, true, true)).toEqual([false, false]);
    expect(gate.skips(true, false)).toBe(true);
    // A loud window starts the count again.
    expect(gate.skips(false, false)).toBe(false);
    expect(run(QUIET_HANGOVER + 1, true, false)).toEqual([...Array(QUIET_HANGOVER).fill(false), true]);
    gate.restart();
    expect(gate.skips(true, false)).toBe(false);
  });
});

describe('Silero quiet gate in the detector', () => {
  it('decides skipped windows "no speech" in order, runs every loud window, and is off unless asked', () => {
    for (const quietGate of [false, true]) {
      const model = new ScriptedModel(0.01);
      const detectors = sileroDetectors(model, () => new FvadClassifier(fvad, 3), { quietGate });
      const decided: Array<{ frame: Int16Array; speech: boolean }> = [];
      const vad = detectors.create((frame, speech) => decided.push({ frame, speech }));
      // 3.2 s of room tone (100 windows), a loud second, room tone again.
      const loud = Int16Array.from({ length: 16000 }, (_, i) => Math.round(8000 * Math.sin(i / 5)));
      const pushed = frames(concat(roomTone(3200), loud, roomTone(3200)));
      for (const [i, frame] of pushed.entries()) {
        model.probability = i >= 160 && i < 210 ? 0.9 : 0.01;
        vad.push(frame);
      }
      const windows = Math.floor((pushed.length * VAD_FRAME_SAMPLES - 64) / 512);
      expect(model.runs + detectors.quietWindows).toBe(windows);
      expect(decided.every((d, i) => d.frame === pushed[i])).toBe(true);
      expect(decided.filter((d) => d.speech).length).toBeGreaterThan(40);
      if (!quietGate) expect(detectors.quietWindows).toBe(0);
      // Each quiet stretch: the network runs its first QUIET_HANGOVER windows (and the speech's tail) and nothing more.
      // (the loud second touches 32–33 windows; the answer for the last of them ends the speech).
      else expect(model.runs).toBeGreaterThanOrEqual(2 * QUIET_HANGOVER + 32);
      if (quietGate) expect(model.runs).toBeLessThanOrEqual(2 * QUIET_HANGOVER + 34);
      vad.free();
    }
  });
});

const gated = await createSileroFactory({ batchWaitMs: 0, quietGate: true });
const plain = await createSileroFactory({ batchWaitMs: 0 });
const speechOf = async (factory: typeof plain, audio: Int16Array): Promise<boolean[]> => (await vadFrames(factory, audio)).map((f) => f.speech);

describe('Silero quiet gate on real audio (the network on its thread)', () => {
  it.each(['twelve.wav', 'pause-and.wav', 'order-pause.wav', 'okay.wav', 'cough.wav', 'tone.wav', 'noise.wav'])(
    'decides %s frame for frame as without the gate when no quiet stretch past the hangover precedes speech',
    async (clip) => {
      const audio = concat(roomTone(300), loadFixture(clip), roomTone(2000));
      const [a, b] = await Promise.all([speechOf(gated, audio), speechOf(plain, audio)]);
      expect(a).toEqual(b);
    },
  );

  it('skips all but the hangover of a quiet room, and of a live but near-silent microphone, deciding every frame no speech', async () => {
    for (const audio of [roomTone(10000), loadFixture('near-silent.wav'), loadFixture('zeros.wav')]) {
      const before = { quiet: gated.quietWindows, run: gated.model.windows };
      const speech = await speechOf(gated, audio);
      const skipped = gated.quietWindows - before.quiet;
      const run = gated.model.windows - before.run;
      expect(speech.some(Boolean)).toBe(false);
      expect(run).toBe(QUIET_HANGOVER);
      expect(skipped).toBeGreaterThan(audio.length / 512 - QUIET_HANGOVER - 3);
    }
  });

  // Not a bound for every sound: in the corpus a few short sounds after 3 s of quiet changed more (bench/results-voice-adapter.md).
  it('after a long quiet stretch, moves the speech starts and ends of these clips by at most two frames (the network state it kept is 2.5 s old)', async () => {
    const audio = concat(roomTone(3000), loadFixture('twelve.wav'), roomTone(3000), loadFixture('name.wav'), roomTone(1000));
    const [a, b] = await Promise.all([speechOf(gated, audio), speechOf(plain, audio)]);
    const edges = (s: boolean[]): number[] => s.flatMap((x, i) => (i > 0 && x !== s[i - 1] ? [i] : []));
    const [ea, eb] = [edges(a), edges(b)];
    expect(ea).toHaveLength(eb.length);
    ea.forEach((e, i) => expect(Math.abs(e - eb[i]!)).toBeLessThanOrEqual(2));
  });
});
