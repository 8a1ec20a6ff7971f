import type { VadFactory } from '../media/vad.ts';
import type { OutputEncoding } from '../media/pcm.ts';
import type { ClientFrame } from './protocol/client.ts';
import type { SpeechToText } from './providers/asr.ts';
import type { LanguageModel } from './providers/llm.ts';
import type { WebSearch } from './providers/search.ts';
import type { TextToSpeech } from './providers/tts.ts';
import type { VoiceCatalog } from './providers/voices.ts';
import type { ToolDeskOptions } from './tools/tool-desk.ts';
import type { Transport } from './transport.ts';
import type { Prices, UsageSink } from './usage/usage-meter.ts';
import type { DeadlineSettings } from './closing/session-deadlines.ts';
import type { CreditSettings } from './usage/credit-watch.ts';
import type { SessionObserver } from './observer.ts';
import type { BargeInPolicy } from './voice/barge-in.ts';

export interface SessionLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** What the host (signaling) wires into a session: its transport, providers and limits. */
export interface SessionDeps {
  transport: Transport;
  llm: LanguageModel;
  voices: VoiceCatalog;
  log: SessionLog;
  search?: WebSearch;
  tools: ToolDeskOptions;
  endCallGraceMs: number;
  signOff: string;
  /** Characters of conversation kept for the model (history-budget.ts; default 100,000). */
  historyMaxChars?: number;
  /** Voice sessions only. */
  voice?: { tts: TextToSpeech; stt: SpeechToText; vad: VadFactory; bargeIn?: BargeInPolicy };
  /** Metrics, logs and traces of the session's work (none when absent). */
  observer?: SessionObserver;
  /** The pipeline's own formats when the transport is not the wire format (WebRTC: 48 kHz PCM16 both ways). */
  media?: { inputRate: number; outputRate: number; encoding: OutputEncoding };
  /** Where each turn's usage goes (the ledger) and how it is priced; without it usage is only on `done`. */
  usage?: { sink: UsageSink; prices: Prices };
  /** CLOSING_NOTICE_S (ms) and the closes the session plans itself; default: a 60 s notice, no idle close, no cap. */
  closing?: DeadlineSettings & { noticeMs: number };
  /** The account has a credit balance: warn when it runs low, close when it runs out. */
  credit?: CreditSettings;
  /** Called after every reply ends (its done sent): the moment to write the conversation through. */
  onTurnEnd?(): void;
}

/** Frames the session core handles; start is the connection's business. */
export type SessionFrame = Exclude<ClientFrame, { type: 'start' }>;
