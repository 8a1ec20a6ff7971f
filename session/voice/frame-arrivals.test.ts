import { describe, expect, it } from 'vitest';
import { FrameArrivals } from './frame-arrivals.ts';

describe('FrameArrivals', () => {
  it('finds the speech onset: the first voiced frame of the last four', () => {
    const a = new FrameArrivals();
    const flags = [false, false, false, true, false, true, true];
    flags.forEach((speech, i) => {
      a.arrive(1000 + i * 20);
      a.decide(speech);
    });
    // Frames 3..6 are the window: 3 is its first voiced one.
    expect(a.onset()).toBe(1060);
  });

  it('times a turn end from the arrival of the last voiced frame, even when frames are decided late', () => {
    const a = new FrameArrivals();
    // A batching VAD: ten frames arrive, then are decided together later.
    for (let i = 0; i < 10; i += 1) a.arrive(2000 + i * 20);
    for (let i = 0; i < 10; i += 1) a.decide(i < 6);
    // 80 ms of silence were counted: frames 6..9; frame 5 was the last voiced one.
    expect(a.turnEnd(80, 2500)).toEqual({ lastVoicedAt: 2100, decidedAt: 2500 });
  });

  it('falls back to the oldest frame it remembers for a silence longer than its memory', () => {
    const a = new FrameArrivals();
    for (let i = 0; i < 300; i += 1) {
      a.arrive(i * 20);
      a.decide(false);
    }
    expect(a.turnEnd(10_000, 9000).lastVoicedAt).toBe(44 * 20);
  });
});
