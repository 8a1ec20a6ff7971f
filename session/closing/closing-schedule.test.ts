import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ServerFrame } from '../protocol/server.ts';
import { SessionClosingSoonFrame } from '../protocol/server.ts';
import { ClosingSchedule } from './closing-schedule.ts';

/** session_closing_soon ahead of each planned close, on a fake clock. */

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => vi.useRealTimers());

function schedule(noticeMs = 60_000): { schedule: ClosingSchedule; frames: ServerFrame[]; closes: string[] } {
  const frames: ServerFrame[] = [];
  const closes: string[] = [];
  const s = new ClosingSchedule({ send: (f) => frames.push(SessionClosingSoonFrame.parse(f)), log: { info: () => undefined } }, noticeMs);
  return { schedule: s, frames, closes };
}

describe('ClosingSchedule', () => {
  it('sends the notice exactly the lead ahead, then closes at the planned moment', () => {
    const { schedule: s, frames, closes } = schedule();
    s.plan('max_duration', 300_000, false, () => closes.push('max_duration'));
    vi.advanceTimersByTime(239_999);
    expect(frames).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(frames).toEqual([{ type: 'session_closing_soon', reason: 'max_duration', closes_in_ms: 60_000, resumable: false }]);
    vi.advanceTimersByTime(59_999);
    expect(closes).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(closes).toEqual(['max_duration']);
    expect(s.planned('max_duration')).toBe(false);
  });

  it('with less time left than the lead, the notice goes at once with the true time left', () => {
    const { schedule: s, frames, closes } = schedule();
    s.plan('session_window', 12_345, true, () => closes.push('window'));
    expect(frames).toEqual([{ type: 'session_closing_soon', reason: 'session_window', closes_in_ms: 12_345, resumable: true }]);
    vi.advanceTimersByTime(12_345);
    expect(closes).toEqual(['window']);
  });

  it('a close called off after its notice is announced cancelled; one called off before says nothing', () => {
    const { schedule: s, frames, closes } = schedule(1000);
    s.plan('idle', 5000, false, () => closes.push('idle'));
    s.cancel('idle');
    vi.advanceTimersByTime(10_000);
    expect(frames).toEqual([]);
    s.plan('idle', 5000, false, () => closes.push('idle'));
    vi.advanceTimersByTime(4500);
    s.cancel('idle');
    vi.advanceTimersByTime(10_000);
    expect(frames.map((f) => f.type === 'session_closing_soon' && [f.closes_in_ms, f.cancelled])).toEqual([
      [1000, undefined],
      [0, true],
    ]);
    expect(closes).toEqual([]);
  });

  it('planned again, a close moves: beyond the lead the notice out is cancelled, within it a new notice replaces it', () => {
    const { schedule: s, frames, closes } = schedule(1000);
    s.plan('idle', 2000, false, () => closes.push('idle'));
    vi.advanceTimersByTime(1500);
    s.plan('idle', 2000, false, () => closes.push('idle'));
    vi.advanceTimersByTime(1000);
    s.plan('credit', 800, true, () => closes.push('credit'));
    s.plan('credit', 300, true, () => closes.push('credit'));
    vi.advanceTimersByTime(1000);
    expect(frames.map((f) => f.type === 'session_closing_soon' && `${f.reason} ${f.closes_in_ms}${f.cancelled ? ' cancelled' : ''}`)).toEqual([
      'idle 1000',
      'idle 0 cancelled',
      'idle 1000',
      'credit 800',
      'credit 300',
    ]);
    expect(closes).toEqual(['credit', 'idle']);
  });

  it('keeps several reasons apart, and a closed schedule runs nothing', () => {
    const { schedule: s, frames, closes } = schedule(1000);
    s.plan('max_duration', 5000, false, () => closes.push('max'));
    s.plan('idle', 3000, false, () => closes.push('idle'));
    expect(s.remainingMs('idle')).toBe(3000);
    vi.advanceTimersByTime(2000);
    s.close();
    vi.advanceTimersByTime(10_000);
    expect(frames.map((f) => f.type === 'session_closing_soon' && f.reason)).toEqual(['idle']);
    expect(closes).toEqual([]);
    s.announce('restart', 10, true);
    expect(frames).toHaveLength(1);
  });

  it('waits past setTimeout’s 24.8-day ceiling without firing early', () => {
    const { schedule: s, frames, closes } = schedule();
    const thirtyDays = 30 * 24 * 3600 * 1000;
    s.plan('session_window', thirtyDays, true, () => closes.push('window'));
    vi.advanceTimersByTime(thirtyDays - 60_001);
    expect(frames).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(frames).toHaveLength(1);
    vi.advanceTimersByTime(60_000);
    expect(closes).toEqual(['window']);
  });
});
