import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import type { LanguageModel } from '../session/providers/llm.ts';
import type { VoiceCatalog } from '../session/providers/voices.ts';
import type { SessionRegistry } from './session-registry.ts';
import type { SpeechToText } from '../session/providers/asr.ts';
import type { TextToSpeech } from '../session/providers/tts.ts';
import type { VadFactory } from '../media/vad.ts';
import type { BargeInPolicy } from '../session/voice/barge-in.ts';
import type { WebSearch } from '../session/providers/search.ts';
import type { Stores } from './stores/stores.ts';
import type { Observability } from './observability/observability.ts';
import type { ServerToolSet } from '../session/tools/server-tool.ts';
import type { FailedAttempts } from './failed-attempts.ts';
import type { ServerUsage } from './usage/server-usage.ts';

/** The voice pipeline's providers, or why voice sessions cannot run here. */
export type VoiceProviders =
  | { ok: true; tts: TextToSpeech; stt: SpeechToText; vad: VadFactory; bargeIn: BargeInPolicy }
  | { ok: false; reason: string };

/** What the HTTP routes and the WebSocket layer share; built once in server.ts. */
export interface ServerContext {
  config: Config;
  /** Keys, reports, the resume stash, the live-session registry: shared or embedded. */
  stores: Stores;
  secret: Buffer;
  log: Logger;
  llm: LanguageModel;
  voices: VoiceCatalog;
  sessions: SessionRegistry;
  voice: VoiceProviders;
  search: WebSearch | undefined;
  /** Tools the server runs itself (createServer's `tools`), offered in every session. */
  serverTools: ServerToolSet;
  /** Failed key checks and resume attempts per client address. */
  attempts: FailedAttempts;
  /** The usage ledger, credit and per-account limits. */
  usage: ServerUsage;
  /** True once SIGTERM (or stop()) began draining: no new sessions. */
  draining: boolean;
  /** Metrics, traces and readiness checks. */
  observability: Observability;
}
