import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DownlinkPacer } from './downlink-pacer.ts';
import { PacerClock, type Ticking } from './pacer-clock.ts';

// Simulated time: the clock's timers and performance.now are fake, and jump to the next timer
// whenever a test waits (whenIdle), so every instant below is exact.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  vi.setTimerTickMode('nextTimerAsync');
});
afterEach(() => {
  vi.useRealTimers();
});
const passTime = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe('PacerClock', () => {
  const clocks: PacerClock[] = [];
  afterEach(() => {
    for (const c of clocks.splice(0)) for (const m of [...(c as unknown as { members: Set<Ticking> }).members]) c.remove(m);
  });

  it('puts deadlines on its grid while running, and leaves them alone when stopped', () => {
    const clock = new PacerClock(5);
    clocks.push(clock);
    expect(clock.align(1234.56)).toBe(1234.56);
    const member: Ticking = { tick: () => undefined };
    clock.add(member);
    const origin = (clock as unknown as { origin: number }).origin;
    expect(clock.align(origin)).toBe(origin);
    expect(clock.align(origin + 0.01)).toBe(origin + 5);
    expect(clock.align(origin + 5)).toBe(origin + 5);
    expect(clock.align(origin + 12.4)).toBe(origin + 15);
    clock.remove(member);
    expect(clock.running).toBe(false);
  });

  it('ticks on grid instants, never before them', async () => {
    const clock = new PacerClock(5);
    clocks.push(clock);
    const seen: Array<{ now: number; at: number }> = [];
    const member: Ticking = { tick: (now) => seen.push({ now, at: performance.now() }) };
    clock.add(member);
    const origin = (clock as unknown as { origin: number }).origin;
    await passTime(60);
    clock.remove(member);
    expect(seen.length).toBeGreaterThan(3);
    for (const { now, at } of seen) {
      const steps = (now - origin) / 5;
      // `now` is the grid instant itself or the real time after it, never a time before the grid.
      expect(at).toBeGreaterThanOrEqual(origin + Math.floor(steps + 1e-9) * 5 - 0.25);
      expect(now).toBeGreaterThanOrEqual(origin + 5);
    }
  });
});

describe('DownlinkPacer on the grid', () => {
  it('sends the lead at once, then one frame per 20 ms deadline on the clock grid, recording lateness', async () => {
    const clock = new PacerClock(5);
    const sent: number[] = [];
    const late: number[] = [];
    const pacer = new DownlinkPacer({ sampleRate: 16000, leadMs: 60, clock, send: () => sent.push(performance.now()), onLate: (ms) => late.push(ms) });
    pacer.push(new Int16Array(16000 * 0.2)); // 10 frames
    // nextAt is aligned to the grid at or after now, so 3 frames (deadlines −60, −40, −20) go at once.
    expect(sent.length).toBe(3);
    await pacer.whenIdle();
    expect(sent.length).toBe(10);
    // Only the frames the clock sent are measured (the lead leaves at once by design).
    expect(late).toHaveLength(7);
    for (const ms of late) expect(ms).toBeGreaterThanOrEqual(-0.25);
    // The run (and the clock) ends once the audio handed over has played out: the lead later.
    expect(clock.running).toBe(true);
    await passTime(120);
    expect(clock.running).toBe(false);
    // The run started on the grid (the clock's origin, as it was idle): frame k is due at
    // origin + 20·(k − 3) and the clock never sends it before that.
    const origin = (clock as unknown as { origin: number }).origin;
    for (let k = 3; k < sent.length; k += 1) expect(sent[k]).toBeGreaterThanOrEqual(origin + 20 * (k - 3) - 0.25);
  });

  it('continues a run with audio queued while the handed audio plays: slices shorter than the lead are not sent at once', async () => {
    const clock = new PacerClock(5);
    const sent: number[] = [];
    const pacer = new DownlinkPacer({ sampleRate: 16000, leadMs: 200, clock, send: () => sent.push(performance.now()) });
    const t0 = performance.now();
    // Four 100 ms slices handed over one by one (no time passes meanwhile), as a TTS streams.
    for (let i = 0; i < 4; i += 1) {
      pacer.push(new Int16Array(1600));
      await Promise.resolve();
    }
    // Only the 200 ms lead left at once; the other ten frames follow at real-time pace.
    expect(sent.length).toBe(10);
    expect(pacer.aheadMs(performance.now())).toBeGreaterThan(150);
    await pacer.whenIdle();
    expect(sent.length).toBe(20);
    // Frame 19 is due 19 · 20 ms after the run began, less the lead.
    expect(sent[19]! - t0).toBeGreaterThanOrEqual(175);
    await passTime(250);
    expect(clock.running).toBe(false);
    expect(pacer.aheadMs(performance.now())).toBe(0);
  });
});
