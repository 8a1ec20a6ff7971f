import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BargeIn, DEFAULT_BARGE_IN, type BargeInPolicy } from './barge-in.ts';

function host(replying = true) {
  const calls: string[] = [];
  return {
    calls,
    replying,
    pauseReply: () => (calls.push('pause'), true),
    resumeReply: () => void calls.push('resume'),
    interruptReply: () => void calls.push('interrupt'),
    log: { info: () => undefined },
  };
}

describe('BargeIn (false-interruption recovery)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());
  const make = (policy: Partial<BargeInPolicy> = {}, replying = true) => {
    const h = host(replying);
    return { h, b: new BargeIn(h, { ...DEFAULT_BARGE_IN, ...policy }) };
  };

  it('pauses at the onset, resumes on a backchannel, and the backchannel takes no turn', () => {
    const { h, b } = make();
    b.onSpeechStart();
    expect(h.calls).toEqual(['pause']);
    expect(b.onWords('yeah', true)).toBe(false);
    expect(h.calls).toEqual(['pause', 'resume']);
  });

  it('resumes on noise and on an empty transcript (a cough)', () => {
    const { h, b } = make();
    b.onSpeechStart();
    b.onNoise();
    b.onSpeechStart();
    expect(b.onWords('', true)).toBe(false);
    expect(h.calls).toEqual(['pause', 'resume', 'pause', 'resume']);
  });

  it('confirms on sustained speech, and on words mid-segment', () => {
    const { h, b } = make();
    b.onSpeechStart();
    b.onSpeechSustained();
    expect(h.calls).toEqual(['pause', 'interrupt']);
    b.onSpeechStart();
    expect(b.onWords('wait', false)).toBe(true);
    expect(h.calls).toEqual(['pause', 'interrupt', 'pause', 'interrupt']);
  });

  it('resumes after maxPauseMs when nothing confirms', () => {
    const { h, b } = make({ maxPauseMs: 1500 });
    b.onSpeechStart();
    vi.advanceTimersByTime(1499);
    expect(h.calls).toEqual(['pause']);
    vi.advanceTimersByTime(1);
    expect(h.calls).toEqual(['pause', 'resume']);
    // Real words after the resume still take the floor.
    expect(b.onWords('no i meant tuesday', true)).toBe(true);
  });

  it('confirm=speech ignores words; confirm=words ignores length; immediate interrupts at 100 ms with no pause', () => {
    const speech = make({ confirm: 'speech' });
    speech.b.onSpeechStart();
    expect(speech.b.onWords('no i meant tuesday', true)).toBe(false);
    expect(speech.h.calls).toEqual(['pause', 'resume']);
    const words = make({ confirm: 'words' });
    words.b.onSpeechStart();
    words.b.onSpeechSustained();
    expect(words.h.calls).toEqual(['pause']);
    const immediate = make({ confirm: 'immediate' });
    immediate.b.onSpeechStart();
    immediate.b.onSpeechConfirmed();
    expect(immediate.h.calls).toEqual(['interrupt']);
  });

  it('does nothing while the assistant is silent: the speech is a normal turn', () => {
    const { h, b } = make({}, false);
    b.onSpeechStart();
    expect(b.onWords('yeah', true)).toBe(true);
    expect(h.calls).toEqual([]);
  });
});
