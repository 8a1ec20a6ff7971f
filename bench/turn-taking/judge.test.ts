import { describe, expect, it } from 'vitest';
import { disagreements, judgeClip, PAUSE_GRACE_MS, wasCut } from './judge.ts';

// 3 s of speech (48,000 samples) with a 400 ms pause from 1 s (sample 16,000) to 1.4 s.
const clip = { split: 'heldout' as const, endSample: 48000, pauses: [{ atSample: 16000, ms: 400, after: 'and' }] };

describe('judgeClip', () => {
  it('takes the first turn end at or after the end of speech as the delay', () => {
    const j = judgeClip(clip, [3260, 3900]);
    expect(j).toEqual({ split: 'heldout', delayMs: 260, pauses: [{ ms: 400, cut: false }], elsewhere: 0 });
    expect(wasCut(j)).toBe(false);
  });

  it('counts a turn end inside the pause, or within the grace after it, as a cut-off', () => {
    expect(judgeClip(clip, [1000, 3260]).pauses[0]!.cut).toBe(true);
    expect(judgeClip(clip, [1400 + PAUSE_GRACE_MS - 1]).pauses[0]!.cut).toBe(true);
    expect(wasCut(judgeClip(clip, [1400 + PAUSE_GRACE_MS]))).toBe(false);
    expect(judgeClip(clip, [999]).pauses[0]!.cut).toBe(false);
  });

  it('keeps the delay of a clip that was cut (the turn went on, as speech resumed)', () => {
    expect(judgeClip(clip, [1300, 3300]).delayMs).toBe(300);
  });

  it('counts a turn end before the end of speech outside every pause as a cut elsewhere', () => {
    const j = judgeClip(clip, [600, 2000, 3300]);
    expect(j.elsewhere).toBe(2);
    expect(wasCut(j)).toBe(false);
  });

  it('has no delay when the turn never ended after the speech', () => {
    expect(judgeClip(clip, [1200]).delayMs).toBeUndefined();
    expect(judgeClip({ ...clip, pauses: [] }, []).delayMs).toBeUndefined();
  });
});

describe('disagreements', () => {
  const agree = judgeClip(clip, [3260]);

  it('finds none between the same outcome, or delays within 200 ms', () => {
    expect(disagreements(agree, agree)).toEqual([]);
    expect(disagreements(judgeClip(clip, [3400]), agree)).toEqual([]);
  });

  it('names a cut-off only one of them made, at the pause or in mid-speech', () => {
    expect(disagreements(judgeClip(clip, [1200, 3260]), agree)).toEqual(['cut at the pause by the server only']);
    expect(disagreements(agree, judgeClip(clip, [500, 3260]))).toEqual(['cut in mid-speech by the replay only']);
  });

  it('names delays more than 200 ms apart, and a turn that never ended on one side', () => {
    expect(disagreements(judgeClip(clip, [4301]), agree)).toEqual(['end of turn 1301 ms on the server, 260 ms replayed']);
    expect(disagreements(judgeClip(clip, []), agree)).toEqual(['no turn end after the speech on the server']);
  });
});
