import type { TurnMetrics, TurnStage } from './protocol/turn-metrics.ts';
import type { TurnScope, TurnSummary } from './observer.ts';

/** The moments a turn's stages run between (performance.now() milliseconds). */
export type TurnMark =
  | 'lastVoiced'
  | 'endOfTurn'
  | 'asrFinal'
  | 'inputText'
  | 'llmRequest'
  | 'llmFirstToken'
  | 'ttsRequest'
  | 'ttsFirstAudio'
  | 'firstAudioOut'
  | 'firstTextDelta'
  | 'speechOnset'
  | 'downlinkStopped';

/** Each stage of the waterfall (session/protocol/turn-metrics.ts) as the two marks it runs between. */
const STAGE_SPANS: ReadonlyArray<readonly [TurnStage, TurnMark, TurnMark]> = [
  ['end_of_turn', 'lastVoiced', 'endOfTurn'],
  ['asr_final', 'endOfTurn', 'asrFinal'],
  ['llm_first_token', 'llmRequest', 'llmFirstToken'],
  ['tts_first_audio', 'ttsRequest', 'ttsFirstAudio'],
  ['first_audio_out', 'endOfTurn', 'firstAudioOut'],
  ['text_first_delta', 'inputText', 'firstTextDelta'],
  ['barge_in_stop', 'speechOnset', 'downlinkStopped'],
];

/**
 * One turn's waterfall and its place in the host's traces. Each moment is marked at the one
 * place it happens (the endpointer's decision, the model's first token, the first audio byte
 * handed to the transport...); the first mark of a moment wins, so a later repeat (a second
 * tool round, the next sentence) never moves it.
 */
export class TurnObservation {
  private readonly at: Partial<Record<TurnMark, number>> = {};
  private ended = false;

  constructor(private readonly scope: TurnScope) {}

  mark(mark: TurnMark, at: number = performance.now()): void {
    this.at[mark] ??= at;
  }

  /** Forgets a moment that turned out not to count (a paused downlink that resumed). */
  unmark(mark: TurnMark): void {
    delete this.at[mark];
  }

  has(mark: TurnMark): boolean {
    return this.at[mark] !== undefined;
  }

  /** The stages whose two moments both happened, in milliseconds to 0.1. */
  metrics(): TurnMetrics {
    const metrics: TurnMetrics = {};
    for (const [stage, from, to] of STAGE_SPANS) {
      const start = this.at[from];
      const end = this.at[to];
      if (start !== undefined && end !== undefined) metrics[stage] = Math.round(Math.max(0, end - start) * 10) / 10;
    }
    return metrics;
  }

  run<T>(fn: () => T): T {
    return this.scope.run(fn);
  }

  end(reply: TurnSummary | undefined): void {
    if (this.ended) return;
    this.ended = true;
    this.scope.end(reply);
  }
}
