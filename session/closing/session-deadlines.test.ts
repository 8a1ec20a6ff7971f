import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ServerFrame } from '../protocol/server.ts';
import { ClosingSchedule } from './closing-schedule.ts';
import { SessionDeadlines, type DeadlineSettings } from './session-deadlines.ts';

/** The closes a session plans for itself, idle and max_duration, on a fake clock. */

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => vi.useRealTimers());

function deadlines(settings: DeadlineSettings, noticeMs = 60_000) {
  const frames: ServerFrame[] = [];
  const done: string[] = [];
  let wrapping = false;
  const schedule = new ClosingSchedule({ send: (f) => frames.push(f), log: { info: () => undefined } }, noticeMs);
  const d = new SessionDeadlines(schedule, settings, {
    wrapUp: () => {
      wrapping = true;
      done.push('wrap_up');
    },
    wrappingUp: () => wrapping,
    close: (code, reason) => done.push(`${code} ${reason}`),
  });
  const notices = () => frames.map((f) => (f.type === 'session_closing_soon' ? `${f.reason} ${f.closes_in_ms}${f.cancelled ? ' cancelled' : ''}` : f.type));
  return { d, done, notices };
}

describe('SessionDeadlines', () => {
  it('max_duration counts from the conversation’s first start (a resume keeps it), announced ahead, then closes 1000', () => {
    const { d, done, notices } = deadlines({ maxDurationMs: 600_000 });
    // A resumed conversation that first started 5 minutes ago.
    d.begin(Date.now() - 300_000);
    vi.advanceTimersByTime(239_999);
    expect(notices()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(notices()).toEqual(['max_duration 60000']);
    vi.advanceTimersByTime(60_000);
    expect(done).toEqual(['1000 max_duration']);
  });

  it('idle: announced ahead, called off by activity, then the wrap-up when the user stays away', () => {
    const { d, done, notices } = deadlines({ idleMs: 300_000 });
    d.begin(Date.now());
    vi.advanceTimersByTime(240_000);
    expect(notices()).toEqual(['idle 60000']);
    d.activity();
    expect(notices()).toEqual(['idle 60000', 'idle 0 cancelled']);
    vi.advanceTimersByTime(299_999);
    expect(done).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(done).toEqual(['wrap_up']);
    expect(notices()).toEqual(['idle 60000', 'idle 0 cancelled', 'idle 60000']);
    // Wrapping up: later activity plans nothing more.
    d.activity();
    vi.advanceTimersByTime(600_000);
    expect(done).toEqual(['wrap_up']);
  });

  it('a short idle time is announced half of it ahead, not the whole notice ahead', () => {
    const { d, notices } = deadlines({ idleMs: 30_000 });
    d.begin(Date.now());
    vi.advanceTimersByTime(14_999);
    expect(notices()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(notices()).toEqual(['idle 15000']);
  });

  it('plans nothing when neither is configured (the default)', () => {
    const { d, done, notices } = deadlines({});
    d.begin(Date.now());
    d.activity();
    vi.advanceTimersByTime(10 * 3600_000);
    expect(notices()).toEqual([]);
    expect(done).toEqual([]);
  });
});
