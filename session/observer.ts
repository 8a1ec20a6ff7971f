import type { TurnMetrics } from './protocol/turn-metrics.ts';
import type { ServerFrameOf } from './protocol/server.ts';
import type { ToolOutcome } from './tools/types.ts';

/**
 * What the session core tells its host about its own work, as plain callbacks: the host
 * (signaling/observability/) turns them into metrics, log lines and trace spans. The core never
 * sees a metric library; without a host observer nothing is recorded (NO_OBSERVER).
 */
export interface SessionObserver {
  /**
   * A turn begins where its first stage begins: at the end-of-turn decision (voice), at
   * input_text (text), or when a reply starts on its own (greeting, trigger_reply, a voiceover).
   */
  openTurn(): TurnScope;
  /** A tool call the model made ended for good, with this outcome. */
  toolCallEnded(outcome: ToolOutcome): void;
}

/** One turn as the host sees it. */
export interface TurnScope {
  /** Runs `fn` as part of this turn: provider calls it starts (even later, asynchronously) belong to the turn. */
  run<T>(fn: () => T): T;
  /** The turn is over: its reply, or undefined when the user's words started none (an empty transcript, a permission answer). */
  end(reply: TurnSummary | undefined): void;
}

export interface TurnSummary {
  turnId: string;
  status: ServerFrameOf<'done'>['status'];
  modality: 'voice' | 'text';
  metrics: TurnMetrics;
}

const NO_SCOPE: TurnScope = { run: (fn) => fn(), end: () => undefined };

export const NO_OBSERVER: SessionObserver = { openTurn: () => NO_SCOPE, toolCallEnded: () => undefined };
