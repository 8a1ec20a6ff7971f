import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BargeIn, DEFAULT_BARGE_IN, DEFAULT_USER_LEVEL_DB, type BargeInPolicy } from './barge-in.ts';

/** Speech at the default user level, long enough for its words to count. */
const AT_LEVEL = { voicedMs: 1000, levelDb: DEFAULT_USER_LEVEL_DB };

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
    expect(b.onWords('yeah', true, AT_LEVEL)).toBe(false);
    expect(h.calls).toEqual(['pause', 'resume']);
  });

  it('resumes on noise and on an empty transcript (a cough)', () => {
    const { h, b } = make();
    b.onSpeechStart();
    b.onNoise();
    b.onSpeechStart();
    expect(b.onWords('', true, AT_LEVEL)).toBe(false);
    expect(h.calls).toEqual(['pause', 'resume', 'pause', 'resume']);
  });

  it('confirms on sustained speech, and on words mid-segment', () => {
    const { h, b } = make();
    b.onSpeechStart();
    b.onSpeechSustained(AT_LEVEL);
    expect(h.calls).toEqual(['pause', 'interrupt']);
    b.onSpeechStart();
    expect(b.onWords('wait', false, AT_LEVEL)).toBe(true);
    expect(h.calls).toEqual(['pause', 'interrupt', 'pause', 'interrupt']);
  });

  it("resumes at the first pause in the sound when its words do not take the floor, and pauses again if the user goes on", () => {
    const { h, b } = make();
    const short = { voicedMs: 300, levelDb: DEFAULT_USER_LEVEL_DB };
    b.onSpeechStart();
    // A probe's partial words: a stray word may begin a sentence ("no, …"), so it waits; "yeah" resumes now, not at the turn's end.
    expect(b.onWords('no', false, short)).toBe(true);
    expect(h.calls).toEqual(['pause']);
    expect(b.onWords('yeah', false, short)).toBe(false);
    expect(h.calls).toEqual(['pause', 'resume']);
    expect(b.pending).toBe(false);
    // The segment's final transcript, later, takes no turn.
    expect(b.onWords('yeah', true, short)).toBe(false);
    // "okay…" then more: the reply pauses again and the rest of the speech decides.
    b.onSpeechStart();
    expect(b.onWords('okay', false, short)).toBe(false);
    b.onSpeechResumed();
    expect(h.calls).toEqual(['pause', 'resume', 'pause', 'resume', 'pause']);
    b.onSpeechSustained(AT_LEVEL);
    expect(h.calls.at(-1)).toBe('interrupt');
    // Empty words at a pause (a cough the recogniser heard nothing in) resume too.
    b.onSpeechStart();
    expect(b.onWords('', false, short)).toBe(false);
    expect(h.calls.slice(-2)).toEqual(['pause', 'resume']);
  });

  it('pauses again once per segment at most, never after the timer, and a backchannel stays no turn when the reply has ended', () => {
    const short = { voicedMs: 300, levelDb: DEFAULT_USER_LEVEL_DB };
    const { h, b } = make();
    b.onSpeechStart();
    b.onWords('mm', false, short);
    b.onSpeechResumed();
    // Paused again; nothing confirms it, so the timer resumes; more speech in the segment does not pause it a third time.
    vi.advanceTimersByTime(DEFAULT_BARGE_IN.maxPauseMs);
    expect(h.calls).toEqual(['pause', 'resume', 'pause', 'resume']);
    b.onSpeechResumed();
    b.onWords('mm', false, short);
    b.onSpeechResumed();
    expect(h.calls).toEqual(['pause', 'resume', 'pause', 'resume']);
    // Resumed at a pause, then the reply ended: going on pauses nothing and the backchannel takes no turn.
    const ended = make();
    ended.b.onSpeechStart();
    ended.b.onWords('yeah', false, short);
    ended.h.replying = false;
    ended.b.onSpeechResumed();
    expect(ended.h.calls).toEqual(['pause', 'resume']);
    expect(ended.b.onWords('yeah yeah', true, short)).toBe(false);
  });

  it("a pause an earlier segment still holds is the new segment's: its own timer, and the old one resumes nothing", () => {
    const { h, b } = make();
    b.onSpeechStart();
    vi.advanceTimersByTime(1000);
    // A second segment starts while the first one's words are not in: the reply stays paused for it, a full maxPauseMs.
    h.pauseReply = () => (h.calls.push('pause'), false);
    b.onSpeechStart();
    vi.advanceTimersByTime(DEFAULT_BARGE_IN.maxPauseMs - 1);
    expect(h.calls).toEqual(['pause', 'pause']);
    vi.advanceTimersByTime(1);
    expect(h.calls).toEqual(['pause', 'pause', 'resume']);
  });

  it('resumes after maxPauseMs when nothing confirms', () => {
    const { h, b } = make({ maxPauseMs: 1500 });
    b.onSpeechStart();
    vi.advanceTimersByTime(1499);
    expect(h.calls).toEqual(['pause']);
    vi.advanceTimersByTime(1);
    expect(h.calls).toEqual(['pause', 'resume']);
    // Real words after the resume still take the floor.
    expect(b.onWords('no i meant tuesday', true, AT_LEVEL)).toBe(true);
  });

  it('confirm=speech ignores words; confirm=words ignores length; immediate interrupts at 100 ms with no pause', () => {
    const speech = make({ confirm: 'speech' });
    speech.b.onSpeechStart();
    expect(speech.b.onWords('no i meant tuesday', true, AT_LEVEL)).toBe(false);
    expect(speech.h.calls).toEqual(['pause', 'resume']);
    const words = make({ confirm: 'words' });
    words.b.onSpeechStart();
    words.b.onSpeechSustained(AT_LEVEL);
    expect(words.h.calls).toEqual(['pause']);
    const immediate = make({ confirm: 'immediate' });
    immediate.b.onSpeechStart();
    immediate.b.onSpeechConfirmed();
    expect(immediate.h.calls).toEqual(['interrupt']);
  });

  it('does nothing while the assistant is silent: the speech is a normal turn', () => {
    const { h, b } = make({}, false);
    b.onSpeechStart();
    expect(b.onWords('yeah', true, AT_LEVEL)).toBe(true);
    expect(h.calls).toEqual([]);
  });

  it('a short backchannel heard as two other words ("you have" for "yeah") resumes; an interruption word in it still confirms', () => {
    const { h, b } = make();
    const short = { voicedMs: 400, levelDb: DEFAULT_USER_LEVEL_DB };
    b.onSpeechStart();
    expect(b.onWords('you have', true, short)).toBe(false);
    expect(h.calls).toEqual(['pause', 'resume']);
    b.onSpeechStart();
    expect(b.onWords('no stop', false, short)).toBe(true);
    expect(h.calls).toEqual(['pause', 'resume', 'pause', 'interrupt']);
    // Three words are more syllables than a backchannel has: a short "wait stop" heard as "like at all".
    b.onSpeechStart();
    expect(b.onWords('like at all', true, short)).toBe(true);
    expect(h.calls).toEqual(['pause', 'resume', 'pause', 'interrupt', 'pause', 'interrupt']);
    // The same two words from longer speech are an interruption; shortSpeechMs 0 turns the rule off.
    b.onSpeechStart();
    expect(b.onWords('you have', true, { ...short, voicedMs: 600 })).toBe(true);
    expect(h.calls.slice(-2)).toEqual(['pause', 'interrupt']);
    const off = make({ shortSpeechMs: 0 });
    off.b.onSpeechStart();
    expect(off.b.onWords('you have', true, short)).toBe(true);
    expect(off.h.calls).toEqual(['pause', 'interrupt']);
  });

  it('level gate: voices 10 dB under the user (babble) confirm nothing; within levelGateDb they interrupt', () => {
    const { h, b } = make({ levelGateDb: 6 });
    const babble = { voicedMs: 1600, levelDb: DEFAULT_USER_LEVEL_DB - 10 };
    b.onSpeechStart();
    b.onSpeechSustained(babble);
    expect(h.calls).toEqual(['pause']);
    expect(b.onWords('or let alone or eight ones on board', true, babble)).toBe(false);
    expect(h.calls).toEqual(['pause', 'resume']);
    b.onSpeechStart();
    b.onSpeechSustained({ voicedMs: 700, levelDb: DEFAULT_USER_LEVEL_DB - 5 });
    expect(h.calls).toEqual(['pause', 'resume', 'pause', 'interrupt']);
    const off = make({ levelGateDb: 0 });
    off.b.onSpeechStart();
    off.b.onSpeechSustained(babble);
    expect(off.h.calls).toEqual(['pause', 'interrupt']);
  });

  it('the gate follows the user: after quiet turns, quiet speech interrupts', () => {
    const { h, b } = make({ levelGateDb: 6 });
    const quiet = { voicedMs: 1500, levelDb: DEFAULT_USER_LEVEL_DB - 14 };
    b.onSpeechStart();
    b.onSpeechSustained(quiet);
    expect(h.calls).toEqual(['pause']);
    b.forget();
    // Turns at −40 dBFS move the estimate from −26 towards −40 (a running mean).
    for (let i = 0; i < 4; i += 1) b.onUserTurn(quiet);
    b.onSpeechStart();
    b.onSpeechSustained(quiet);
    expect(h.calls).toEqual(['pause', 'pause', 'interrupt']);
  });
  describe('at the first voiced frame', () => {
    /** A host whose reply is paused or not, as the session's: a second pause does nothing. */
    const pausing = (policy: Partial<BargeInPolicy> = {}) => {
      const calls: string[] = [];
      let paused = false;
      const h = {
        calls,
        replying: true,
        pauseReply: () => !paused && ((paused = true), calls.push('pause'), true),
        resumeReply: () => void (paused && ((paused = false), calls.push('resume'))),
        interruptReply: () => void calls.push('interrupt'),
        log: { info: () => undefined },
      };
      return { h, b: new BargeIn(h, { ...DEFAULT_BARGE_IN, ...policy }) };
    };

    it('pauses the reply; the segment that starts two frames later keeps that pause, and its timer counts from the onset', () => {
      const { h, b } = pausing();
      b.onSoundOnset();
      expect(h.calls).toEqual(['pause']);
      vi.advanceTimersByTime(40);
      b.onSpeechStart();
      expect(b.pending).toBe(true);
      vi.advanceTimersByTime(DEFAULT_BARGE_IN.maxPauseMs - 41);
      expect(h.calls).toEqual(['pause']);
      vi.advanceTimersByTime(1);
      expect(h.calls).toEqual(['pause', 'resume']);
    });

    it('an onset that opens no segment resumes the reply at once and leaves nothing pending', () => {
      const { h, b } = pausing();
      b.onSoundOnset();
      b.onOnsetDropped();
      expect(h.calls).toEqual(['pause', 'resume']);
      expect(b.pending).toBe(false);
      vi.advanceTimersByTime(DEFAULT_BARGE_IN.maxPauseMs * 2);
      expect(h.calls).toEqual(['pause', 'resume']);
    });

    it('a real interruption after the onset still interrupts; immediate mode, and a reset before the drop, pause or resume nothing', () => {
      const real = pausing();
      real.b.onSoundOnset();
      real.b.onSpeechStart();
      real.b.onSpeechSustained(AT_LEVEL);
      expect(real.h.calls).toEqual(['pause', 'interrupt']);
      const immediate = pausing({ confirm: 'immediate' });
      immediate.b.onSoundOnset();
      immediate.b.onOnsetDropped();
      expect(immediate.h.calls).toEqual([]);
      const reset = pausing();
      reset.b.onSoundOnset();
      reset.b.forget();
      reset.b.onOnsetDropped();
      reset.b.onSpeechStart();
      expect(reset.h.calls).toEqual(['pause']);
      expect(reset.b.pending).toBe(false);
    });
  });
});
