import { describe, expect, it } from 'vitest';
import { FvadClassifier, loadFvad } from './fvad-vad.ts';
import { setMediaStatsHooks } from './media-stats.ts';
import type { SileroJob } from './silero-model.ts';
import { sileroDetectors } from './silero-vad.ts';
import { concat, loadFixture, roomTone } from './testing/audio-stream.ts';
import { VAD_FRAME_SAMPLES } from './vad.ts';

const fvad = await loadFvad();

/** A Silero thread that has stopped answering: jobs are kept until the test answers them. */
class StalledModel {
  readonly jobs: SileroJob[] = [];
  submit(job: SileroJob): void {
    this.jobs.push(job);
  }
  answer(probability: number): void {
    for (const job of this.jobs.splice(0)) job.done(probability);
  }
}

function frames(audio: Int16Array): Int16Array[] {
  return Array.from({ length: Math.floor(audio.length / VAD_FRAME_SAMPLES) }, (_, i) => audio.slice(i * VAD_FRAME_SAMPLES, (i + 1) * VAD_FRAME_SAMPLES));
}

// The quiet gate (silero-gate.ts) decides some windows without the model: the fallback must work the same with it.
describe.each([false, true])('Silero detector backlog while its thread lags (quiet gate %s)', (quietGate) => {
  it('stays bounded when the thread is stalled: fvad decides each frame once, in order', () => {
    const model = new StalledModel();
    const detectors = sileroDetectors(model, () => new FvadClassifier(fvad, 3), { maxBacklogMs: 320, quietGate });
    const decided: Array<{ frame: Int16Array; speech: boolean }> = [];
    const vad = detectors.create((frame, speech) => decided.push({ frame, speech }));
    // The host's metric (parley_vad_fallback_frames_total) hears of every frame the fallback took.
    let reported = 0;
    setMediaStatsHooks({ vadFallback: (frames) => (reported += frames) });
    // 60 s of a live microphone: speech, then room tone, over and over.
    const clip = frames(concat(roomTone(500), loadFixture('twelve.wav'), roomTone(1500)));
    const pushed: Int16Array[] = [];
    let maxPending = 0;
    while (pushed.length < 3000) {
      for (const frame of clip) {
        vad.push(frame);
        pushed.push(frame);
        maxPending = Math.max(maxPending, vad.pending);
      }
    }
    // 320 ms is 16 frames; nothing more is ever held, and only the first window reached the model.
    expect(maxPending).toBeLessThanOrEqual(17);
    expect(model.jobs).toHaveLength(1);
    expect(decided.length).toBeGreaterThanOrEqual(pushed.length - 17);
    expect(decided.every((d, i) => d.frame === pushed[i])).toBe(true);
    expect(detectors.fallbackFrames).toBe(decided.length);
    expect(reported).toBe(decided.length);
    setMediaStatsHooks({ vadFallback: () => undefined });
    // fvad hears the speech in the clip and not the room tone.
    const perClip = decided.slice(0, clip.length).filter((d) => d.speech).length;
    expect(perClip).toBeGreaterThan(20);
    expect(decided.slice(0, 20).some((d) => d.speech)).toBe(false);
    vad.free();
  });

  it('goes back to Silero when the thread answers again, never answering a frame twice', () => {
    const model = new StalledModel();
    const detectors = sileroDetectors(model, () => new FvadClassifier(fvad, 3), { maxBacklogMs: 320, quietGate });
    const decided: Int16Array[] = [];
    const vad = detectors.create((frame) => decided.push(frame));
    const tone = frames(roomTone(2000));
    for (const frame of tone.slice(0, 50)) vad.push(frame);
    const byFallback = detectors.fallbackFrames;
    expect(byFallback).toBeGreaterThan(0);
    // The late answer covers frames fvad already decided; the windows queued since then go to the model one by one.
    model.answer(0.9);
    expect(model.jobs).toHaveLength(1);
    while (model.jobs.length > 0) model.answer(0.01);
    for (const frame of tone.slice(50)) {
      vad.push(frame);
      model.answer(0.01);
    }
    expect(detectors.fallbackFrames).toBe(byFallback);
    expect(new Set(decided).size).toBe(decided.length);
    expect(decided.every((f, i) => f === tone[i])).toBe(true);
    expect(vad.pending).toBeLessThanOrEqual(2);
    vad.free();
  });

  it('a healthy model never falls back', () => {
    const model = new StalledModel();
    const detectors = sileroDetectors(model, () => new FvadClassifier(fvad, 3), { quietGate });
    let decided = 0;
    const vad = detectors.create(() => (decided += 1));
    for (const frame of frames(roomTone(5000))) {
      vad.push(frame);
      model.answer(0.01);
    }
    expect(detectors.fallbackFrames).toBe(0);
    expect(decided).toBeGreaterThanOrEqual(248);
    vad.free();
  });
});

describe('Silero detector: which window decides a frame', () => {
  it('a frame gets the decision of the window its middle sample falls in, as soon as that window is answered', () => {
    const model = new StalledModel();
    const detectors = sileroDetectors(model, () => new FvadClassifier(fvad, 3), {});
    const decided: boolean[] = [];
    const vad = detectors.create((_, speech) => decided.push(speech));
    // Windows (512 samples) alternate speech, speech, silence, silence, ...: the decision flips every two windows.
    const speechWindow = (w: number): boolean => Math.floor(w / 2) % 2 === 0;
    let windows = 0;
    const released: number[] = [];
    for (let k = 0; k < 40; k += 1) {
      vad.push(new Int16Array(VAD_FRAME_SAMPLES));
      while (model.jobs.length > 0) model.answer(speechWindow(windows++) ? 0.9 : 0.01);
      released.push(decided.length);
    }
    const mid = (k: number): number => k * VAD_FRAME_SAMPLES + VAD_FRAME_SAMPLES / 2;
    for (let k = 0; k < 40; k += 1) {
      // Out once the windows answered cover its middle: after frame 1, frames 0 and 1 (the window of frame 1's last sample is not full yet).
      expect(released[k]).toBe(Array.from({ length: k + 1 }, (_, j) => j).filter((j) => mid(j) < Math.floor(((k + 1) * VAD_FRAME_SAMPLES) / 512) * 512).length);
    }
    expect(released[1]).toBe(2);
    for (const [k, speech] of decided.entries()) expect(speech).toBe(speechWindow(Math.floor(mid(k) / 512)));
    vad.free();
  });
});
