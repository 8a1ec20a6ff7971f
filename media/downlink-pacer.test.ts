import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DownlinkPacer } from './downlink-pacer.ts';
import { PacerClock } from './pacer-clock.ts';

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
/** 20 ms frames at 1 kHz (20 samples), each filled with its index. */
const frames = (from: number, count: number): Int16Array => {
  const out = new Int16Array(count * 20);
  for (let i = 0; i < count; i += 1) out.fill(from + i, i * 20, (i + 1) * 20);
  return out;
};

describe('DownlinkPacer pause and resume (false-interruption recovery)', () => {
  function pacer() {
    const sent: number[] = [];
    const p = new DownlinkPacer({ sampleRate: 1000, leadMs: 60, clock: new PacerClock(5), send: (f) => sent.push(f[0]!) });
    return { p, sent };
  }

  it('pause() stops at once and keeps the queue; resume() sends on from the first frame not sent', async () => {
    const { p, sent } = pacer();
    p.push(frames(0, 10));
    await passTime(50);
    p.pause();
    const atPause = sent.length;
    const sentMs = p.sentMs;
    p.push(frames(10, 2));
    await passTime(120);
    expect(sent.length).toBe(atPause);
    expect(p.sentMs).toBe(sentMs);
    p.resume(false);
    await p.whenIdle();
    expect(sent).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  it('while paused, audio ahead is measured at the pause; keepTimeline resumes with the same lead', async () => {
    const { p } = pacer();
    p.push(frames(0, 20));
    await passTime(30);
    p.pause();
    const ahead = p.aheadMs(performance.now());
    await passTime(100);
    expect(p.aheadMs(performance.now())).toBe(ahead);
    p.resume(true);
    expect(p.aheadMs(performance.now())).toBeGreaterThan(ahead - 5);
    p.clear();
  });

  it('clear() while paused drops the queue and ends the pause', async () => {
    const { p, sent } = pacer();
    p.push(frames(0, 10));
    p.pause();
    const before = sent.length;
    expect(p.clear()).toBeGreaterThan(0);
    expect(p.paused).toBe(false);
    p.push(frames(50, 1));
    expect(sent.length).toBe(before + 1);
    p.clear();
  });
});
