import type { ServerFrame } from './protocol/server.ts';
import type { TurnMetrics } from './protocol/turn-metrics.ts';
import type { ConversationHistory, HistorySlot } from './history.ts';
import type { LanguageModel, ModelTool, ModelToolChoice, ToolCallRequest } from './providers/llm.ts';
import type { SessionSettings } from './settings.ts';
import type { ToolRoundResult } from './tools/types.ts';
import type { TurnObservation } from './turn-observation.ts';
import type { UsageMeter } from './usage/usage-meter.ts';
import type { SpeechOutput, SpeechTurn } from './voice/speech-output.ts';

/**
 * A reply's contract with the session (turn-runner.ts runs it): what it needs from the session
 * (TurnContext), what it is asked for (TurnOptions), how it ended and what it leaves behind
 * (TurnStatus, TurnRecord).
 */

export type TurnStatus = 'completed' | 'interrupted' | 'canceled' | 'error';

export interface TurnContext {
  send(frame: ServerFrame): void;
  llm: LanguageModel;
  history: ConversationHistory;
  settings: SessionSettings;
  /** Present in voice sessions: the reply is spoken as well as written. */
  speech: SpeechOutput | undefined;
  /** Current interruption sequence, stamped on utterances. */
  bargeSeq(): number;
  tools(): ModelTool[];
  toolChoice(round: number, afterUserTurn: boolean): ModelToolChoice;
  runTools(calls: ToolCallRequest[], signal: AbortSignal): Promise<ToolRoundResult>;
  /** A session-unique id for a call the model just made (models may reuse ids across replies). */
  claimCallId(modelId: string): string;
  /** The session's meters: each model request's tokens and calls, and the turn's usage at done. */
  meter: Pick<UsageMeter, 'tokens' | 'toolCalls' | 'closeTurn'>;
  /** A fresh observation for a turn that did not bring its own. */
  observe(): TurnObservation;
  log: { warn(obj: object, msg: string): void };
}

export interface TurnOptions {
  turnId: string;
  /** Spoken verbatim instead of asking the model (greeting, sign-off). */
  fixedText?: string;
  welcome?: boolean;
  /** One-off system note for this reply only (trigger_reply instructions). */
  extraInstructions?: string;
  /** The reply answers a user turn: forced tool choices apply to its first round. */
  afterUserTurn?: boolean;
  /** Called just before `done`, so frames that belong to the turn land inside it. */
  beforeDone?(status: TurnStatus, delivered: string): void;
  /** The turn's waterfall, begun where its first stage began (end of turn, input_text); a fresh one when absent. */
  observation?: TurnObservation;
}

/** What a finished turn leaves behind for a later playback correction. */
export interface TurnRecord {
  turnId: string;
  status: TurnStatus;
  speech: SpeechTurn | undefined;
  /** The history entry holding this reply's text, to truncate to what was heard. */
  historySlot: HistorySlot | undefined;
  /** The agent ended the call with this farewell. */
  farewell: string | undefined;
  /** The stages this turn had (also sent as done.metrics). */
  metrics: TurnMetrics;
}
