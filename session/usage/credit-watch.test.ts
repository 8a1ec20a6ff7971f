import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ClosingSchedule } from '../closing/closing-schedule.ts';
import { ServerFrame } from '../protocol/server.ts';
import { CreditWatch } from './credit-watch.ts';
import { UsageMeter } from './usage-meter.ts';

/**
 * Credit on a fake clock, at the default price (1 unit per session second, so seconds left =
 * units left): the low-credit warning once per crossing, the countdown to exhaustion and the
 * close, a top-up calling it off.
 */

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => vi.useRealTimers());

interface Rig {
  frames: ServerFrame[];
  exhausted: number;
  /** The account's balance as the store has it (null: unlimited). */
  balance: number | null;
  failing: boolean;
  meter: UsageMeter;
  watch: CreditWatch;
}

function rig(balance: number | null, lowWarningS = 300, noticeMs = 60_000): Rig {
  const r = { frames: [] as ServerFrame[], exhausted: 0, balance, failing: false } as Rig;
  const send = (frame: ServerFrame): void => void r.frames.push(ServerFrame.parse(frame));
  const log = { info: () => undefined, warn: () => undefined };
  r.meter = new UsageMeter({ session_s: 1 }, undefined);
  const schedule = new ClosingSchedule({ send, log }, noticeMs);
  const line = { balance: async () => (r.failing ? Promise.reject(new Error('postgres is unavailable')) : r.balance) };
  r.watch = new CreditWatch(r.meter, schedule, { line, lowWarningS }, { send, log, exhausted: () => (r.exhausted += 1) });
  return r;
}

const types = (r: Rig) => r.frames.map((f) => (f.type === 'session_closing_soon' ? `closing ${f.reason} ${f.closes_in_ms}${f.cancelled ? ' cancelled' : ''}` : f.type));

describe('CreditWatch', () => {
  it('warns once when the credit would last less than LOW_CREDIT_WARNING_S, then counts down and closes when it runs out', async () => {
    const r = rig(400);
    r.watch.check();
    await vi.advanceTimersByTimeAsync(0);
    expect(r.frames).toEqual([]);
    // 400 s of credit: the warning is due after 100 s; the watch looks again within a second of it.
    await vi.advanceTimersByTimeAsync(100_000);
    expect(r.frames).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    const warning = r.frames.find((f) => f.type === 'low_credit_warning');
    expect(warning).toMatchObject({ type: 'low_credit_warning', rate: 1 });
    expect(warning?.type === 'low_credit_warning' && warning.seconds_left).toBeGreaterThan(298);
    expect(warning?.type === 'low_credit_warning' && warning.seconds_left).toBeLessThan(300);
    // One warning per crossing, however often the watch looks.
    await vi.advanceTimersByTimeAsync(200_000);
    expect(types(r)).toEqual(['low_credit_warning']);
    // 60 s before the credit is gone: the notice, with the true time left. The watch looks when
    // it is due, not up to a look (a second) after it.
    await vi.advanceTimersByTimeAsync(39_000);
    const notice = r.frames.at(-1);
    expect(notice).toMatchObject({ type: 'session_closing_soon', reason: 'credit', resumable: true });
    expect(notice?.type === 'session_closing_soon' && notice.closes_in_ms).toBeGreaterThanOrEqual(59_990);
    expect(notice?.type === 'session_closing_soon' && notice.closes_in_ms).toBeLessThanOrEqual(60_000);
    expect(r.exhausted).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(r.exhausted).toBe(1);
    expect(types(r)).toEqual(['low_credit_warning', 'closing credit ' + (notice as { closes_in_ms: number }).closes_in_ms]);
  });

  it('a top-up during the countdown calls the close off, and lifted above the threshold a later crossing warns again', async () => {
    const r = rig(120);
    r.watch.check();
    await vi.advanceTimersByTimeAsync(0);
    expect(types(r)).toEqual(['low_credit_warning']);
    await vi.advanceTimersByTimeAsync(61_000);
    expect(types(r).at(-1)).toMatch(/^closing credit (60000|5\d{4})$/);
    r.balance = 61 + 1000; // the operator adds 1000 units: about 1000 s left
    await vi.advanceTimersByTimeAsync(1000);
    expect(types(r).at(-1)).toBe('closing credit 0 cancelled');
    await vi.advanceTimersByTimeAsync(120_000);
    expect(r.exhausted).toBe(0);
    // Spending goes on: 1000 s later it falls below 300 s again, and a second warning goes out.
    await vi.advanceTimersByTimeAsync(600_000);
    expect(types(r).filter((t) => t === 'low_credit_warning')).toHaveLength(2);
    expect(r.exhausted).toBe(0);
  });

  it('while warned, the notice goes when it is due, not at the next whole-second look', async () => {
    // 61.5 s of credit: warned at once; looks a second apart would find 60.5 s, then 59.5 s left.
    const r = rig(61.5);
    r.watch.check();
    await vi.advanceTimersByTimeAsync(1000);
    expect(types(r)).toEqual(['low_credit_warning']);
    await vi.advanceTimersByTimeAsync(501);
    expect(types(r)).toEqual(['low_credit_warning', 'closing credit 59999']);
  });

  it('a top-up landing at the very moment of the close still counts', async () => {
    const r = rig(30);
    r.watch.check();
    await vi.advanceTimersByTimeAsync(29_999);
    r.balance = 10_000;
    await vi.advanceTimersByTimeAsync(2);
    expect(r.exhausted).toBe(0);
    expect(types(r)).toEqual(['low_credit_warning', 'closing credit 30000', 'closing credit 0 cancelled']);
  });

  it('an account with nothing left closes at once (notice with 0 ms); an unlimited one is never warned', async () => {
    const empty = rig(0);
    empty.watch.check();
    await vi.advanceTimersByTimeAsync(1);
    expect(types(empty)).toEqual(['low_credit_warning', 'closing credit 0']);
    expect(empty.exhausted).toBe(1);
    const unlimited = rig(null);
    unlimited.watch.check();
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(unlimited.frames).toEqual([]);
  });

  it('a store that cannot answer closes nothing: the watch looks again later', async () => {
    const r = rig(100);
    r.failing = true;
    r.watch.check();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(r.frames).toEqual([]);
    r.failing = false;
    await vi.advanceTimersByTimeAsync(5000);
    expect(types(r)[0]).toBe('low_credit_warning');
  });

  it('stops with the session', async () => {
    const r = rig(70);
    r.watch.check();
    await vi.advanceTimersByTimeAsync(0);
    r.watch.stop();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(types(r)).toEqual(['low_credit_warning']);
    expect(r.exhausted).toBe(0);
  });
});
