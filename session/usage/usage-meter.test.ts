import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UsageMeter, type UsageEntry } from './usage-meter.ts';

/** The meters on a fake clock: intervals, what each accrues, prices, the playback correction. */

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => vi.useRealTimers());

function meter(prices = {}, chars = () => 0): { meter: UsageMeter; entries: UsageEntry[] } {
  const entries: UsageEntry[] = [];
  return { meter: new UsageMeter(prices, { record: (entry) => entries.push(entry) }, chars), entries };
}

describe('UsageMeter', () => {
  it('closes an interval at each done and the last one at the end: wall time adds up, idle time included', () => {
    const { meter: m, entries } = meter();
    vi.advanceTimersByTime(1500);
    const first = m.closeTurn('turn_1', 0);
    expect(first.session_s).toBe(1.5);
    vi.advanceTimersByTime(20_000); // idle
    expect(m.closeTurn('turn_2', 0).session_s).toBe(20);
    vi.advanceTimersByTime(250);
    expect(m.end()?.session_s).toBe(0.25);
    expect(m.end()).toBeUndefined();
    expect(entries.map((e) => e.turnId)).toEqual(['turn_1', 'turn_2', null]);
    expect(entries.reduce((sum, e) => sum + e.usage.session_s, 0)).toBeCloseTo(21.75, 6);
    expect(new Set(entries.map((e) => e.id)).size).toBe(3);
  });

  it('each interval holds what accrued since the previous one, then starts from zero', () => {
    let chars = 0;
    const { meter: m } = meter({}, () => chars);
    m.audioIn(0.5);
    m.audioIn(0.25);
    m.asr(16_000 * 2);
    m.toolCalls(2);
    m.tokens('llm', 100, 20, false);
    m.tokens('llm', 50, 10, true);
    m.tokens('think', 30, 7, false);
    chars = 42;
    const usage = m.closeTurn('turn_1', 1_240);
    expect(usage).toEqual({
      session_s: 0,
      audio_in_s: 0.75,
      audio_out_s: 1.24,
      audio_heard_s: 1.24,
      asr_s: 2,
      llm_input_tokens: 150,
      llm_output_tokens: 30,
      think_input_tokens: 30,
      think_output_tokens: 7,
      tts_chars: 42,
      tool_calls: 2,
      llm_tokens_estimated: true,
      think_tokens_estimated: false,
    });
    chars = 50;
    const next = m.closeTurn('turn_2', 0);
    expect(next).toMatchObject({ audio_in_s: 0, asr_s: 0, llm_input_tokens: 0, tool_calls: 0, tts_chars: 8, llm_tokens_estimated: false });
  });

  it('prices each interval in units, and a playback report rewrites the turn it cut with the same id', () => {
    const { meter: m, entries } = meter({ session_s: 1, audio_heard_s: 10, llm_output_tokens: 0.01 });
    vi.advanceTimersByTime(2000);
    m.tokens('llm', 10, 100, false);
    m.closeTurn('turn_1', 3000);
    expect(entries[0]!.units).toBeCloseTo(2 + 30 + 1, 6);
    m.heard('turn_1', 1200);
    expect(entries).toHaveLength(2);
    expect(entries[1]!.id).toBe(entries[0]!.id);
    expect(entries[1]!.usage.audio_heard_s).toBe(1.2);
    expect(entries[1]!.usage.audio_out_s).toBe(3);
    expect(entries[1]!.units).toBeCloseTo(2 + 12 + 1, 6);
    // Only the last turn can be corrected, and never to more than was sent.
    m.heard('turn_0', 0);
    m.heard('turn_1', 99_000);
    expect(entries.at(-1)!.usage.audio_heard_s).toBe(3);
  });

  it('knows the units not yet in the ledger and its rate: the wall-time price plus the rest averaged over the session', () => {
    const { meter: m } = meter({ session_s: 1, tts_chars: 0.5 });
    vi.advanceTimersByTime(10_000);
    expect(m.pendingUnits()).toBeCloseTo(10, 6);
    // Nothing variable yet: the rate is the wall-time price.
    expect(m.rate()).toBeCloseTo(1, 6);
    let chars = 0;
    const withSpeech = meter({ session_s: 1, tts_chars: 0.5 }, () => chars);
    chars = 240; // 120 units of speech in the first minute
    vi.advanceTimersByTime(30_000);
    withSpeech.meter.closeTurn('turn_1', 0);
    // The variable part is averaged over at least a minute, so one early turn does not dominate.
    expect(withSpeech.meter.rate()).toBeCloseTo(1 + 120 / 60, 6);
    vi.advanceTimersByTime(90_000);
    expect(withSpeech.meter.rate()).toBeCloseTo(1 + 120 / 120, 6);
    expect(withSpeech.meter.pendingUnits()).toBeCloseTo(90, 6);
  });
});
