import { randomId } from '../ids.ts';
import type { Meter, Usage } from '../protocol/usage.ts';

/** Units per meter unit (PRICES); a meter without a price costs nothing. */
export type Prices = Partial<Record<Meter, number>>;

/** One interval of a session's usage, as the ledger stores it. */
export interface UsageEntry {
  /** Stable per interval: rewriting an entry (a playback report) reuses it, so writes are idempotent. */
  id: string;
  /** The turn whose `done` closed the interval; null for the last interval, closed with the session. */
  turnId: string | null;
  /** When the interval closed (ISO 8601, UTC). */
  at: string;
  usage: Usage;
  /** The usage priced with PRICES. */
  units: number;
}

/** Where finished intervals go (the host writes them to the ledger). */
export interface UsageSink {
  record(entry: UsageEntry): void;
}

export type TokenBucket = 'llm' | 'think';

/** The meter's rate estimate looks at no less than this much of the session, so one early turn does not dominate it. */
const RATE_WINDOW_MIN_S = 60;

/**
 * A session's meters. Everything the session uses accrues into the current interval; each `done`
 * closes it (closeTurn: those are the turn's meters, on the wire and in the ledger) and the end
 * of the session closes the last one, so the intervals add up to the whole session and wall time
 * (session_s) accrues continuously, idle time included. Plain number additions on the hot paths:
 * the meters cost next to nothing per frame.
 */
export class UsageMeter {
  private readonly run = randomId('use', 6);
  private seq = 0;
  private readonly openedAt = performance.now();
  private mark = this.openedAt;
  private audioInS = 0;
  private asrSamples = 0;
  private ttsCharsSeen = 0;
  private toolCallCount = 0;
  private llmIn = 0;
  private llmOut = 0;
  private llmEstimated = false;
  private thinkIn = 0;
  private thinkOut = 0;
  private thinkEstimated = false;
  /** Units of every meter but session_s, over the whole session: the variable part of the rate. */
  private variableUnits = 0;
  private lastTurn: UsageEntry | undefined;
  private ended = false;

  constructor(
    private readonly prices: Prices,
    private readonly sink: UsageSink | undefined,
    /** Characters handed to synthesis so far (a running total the speech output keeps). */
    private readonly ttsChars: () => number = () => 0,
  ) {}

  audioIn(seconds: number): void {
    this.audioInS += seconds;
  }

  /** Samples at 16 kHz handed to the recogniser. */
  asr(samples: number): void {
    this.asrSamples += samples;
  }

  toolCalls(count: number): void {
    this.toolCallCount += count;
  }

  tokens(bucket: TokenBucket, input: number, output: number, estimated: boolean): void {
    if (bucket === 'llm') {
      this.llmIn += input;
      this.llmOut += output;
      this.llmEstimated ||= estimated;
    } else {
      this.thinkIn += input;
      this.thinkOut += output;
      this.thinkEstimated ||= estimated;
    }
  }

  /** A `done`: closes the interval; its usage goes on the frame and to the ledger. */
  closeTurn(turnId: string, audioOutMs: number): Usage {
    const entry = this.close(turnId, audioOutMs);
    this.lastTurn = entry;
    return entry.usage;
  }

  /**
   * The client's playback report: of the last interrupted turn only `heardMs` was heard. Its
   * ledger entry is written again, corrected (the done frame had said heard = sent).
   */
  heard(turnId: string, heardMs: number): void {
    const entry = this.lastTurn;
    if (!entry || entry.turnId !== turnId || this.ended) return;
    const before = entry.units;
    entry.usage = { ...entry.usage, audio_heard_s: Math.min(entry.usage.audio_out_s, seconds(heardMs)) };
    entry.units = this.unitsOf(entry.usage);
    this.variableUnits += entry.units - before;
    this.sink?.record({ ...entry });
  }

  /** The session ended: the last interval (idle time since the last done, late tool and job usage). */
  end(): Usage | undefined {
    if (this.ended) return undefined;
    const { usage } = this.close(null, 0);
    this.ended = true;
    return usage;
  }

  /** Units of the open interval, wall time included: used but not yet in the ledger. */
  pendingUnits(): number {
    return this.unitsOf(this.current(0, performance.now()));
  }

  /** Units per second this session uses now: its wall-time price plus the variable part averaged over the session. */
  rate(): number {
    const elapsedS = Math.max(RATE_WINDOW_MIN_S, (performance.now() - this.openedAt) / 1000);
    // The open interval measured at its own start has no wall time: what is left is its variable part.
    const variable = this.variableUnits + this.unitsOf(this.current(0, this.mark));
    return (this.prices.session_s ?? 0) + variable / elapsedS;
  }

  private close(turnId: string | null, audioOutMs: number): UsageEntry {
    const now = performance.now();
    const usage = this.current(audioOutMs, now);
    this.mark = now;
    this.ttsCharsSeen = this.ttsChars();
    this.audioInS = 0;
    this.asrSamples = 0;
    this.toolCallCount = 0;
    this.llmIn = this.llmOut = this.thinkIn = this.thinkOut = 0;
    this.llmEstimated = this.thinkEstimated = false;
    const units = this.unitsOf(usage);
    this.variableUnits += units - (this.prices.session_s ?? 0) * usage.session_s;
    this.seq += 1;
    const entry: UsageEntry = { id: `${this.run}:${this.seq}`, turnId, at: new Date().toISOString(), usage, units };
    this.sink?.record({ ...entry });
    return entry;
  }

  /** The open interval's meters as of `now` (wall time from the interval's start). */
  private current(audioOutMs: number, now: number): Usage {
    const out = seconds(audioOutMs);
    return {
      session_s: seconds(now - this.mark),
      audio_in_s: round(this.audioInS),
      audio_out_s: out,
      audio_heard_s: out,
      asr_s: round(this.asrSamples / 16_000),
      llm_input_tokens: this.llmIn,
      llm_output_tokens: this.llmOut,
      think_input_tokens: this.thinkIn,
      think_output_tokens: this.thinkOut,
      tts_chars: this.ttsChars() - this.ttsCharsSeen,
      tool_calls: this.toolCallCount,
      llm_tokens_estimated: this.llmEstimated,
      think_tokens_estimated: this.thinkEstimated,
    };
  }

  private unitsOf(usage: Usage): number {
    let units = 0;
    for (const meter in this.prices) units += (usage[meter as Meter] ?? 0) * (this.prices[meter as Meter] ?? 0);
    return units;
  }
}

const round = (value: number): number => Math.round(value * 1000) / 1000;
const seconds = (ms: number): number => round(ms / 1000);
