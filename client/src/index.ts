/**
 * The Parley client library, for browsers and Node. The server serves this bundle at /client.js;
 * bundlers and Node import it from the package (`parley-realtime/client`). No Node built-ins, no
 * zod at run time.
 */
export { RealtimeClient } from './realtime-client.ts';
export { RealtimeError, LIBRARY_ERROR_CODES } from './errors.ts';
export { sendFeedback, sendClientError } from './one-shot.ts';
export { nextReconnectDelay, DEFAULT_RECONNECT_POLICY } from './reconnect-policy.ts';
export { CAPTURE_PROCESSOR } from './capture/worklet-source.ts';
export { FRAME_EVENT } from './types.ts';
export type {
  AmbienceMode,
  AmbienceOption,
  AmbienceSettings,
  AudioPlayer,
  ClosingReason,
  AccountLimit,
  ConnectOptions,
  DoneFrame,
  LowCreditWarningFrame,
  SessionClosingSoonFrame,
  Usage,
  InjectContextOptions,
  InputDevice,
  InteractionSpec,
  LibraryEventDetails,
  Mode,
  NarrationState,
  ReadyFrame,
  RealtimeClientEventMap,
  RealtimeClientOptions,
  ResumeState,
  ServerFrame,
  ServerFrameOf,
  StartMicOptions,
  ToolChoice,
  ToolOutcome,
  TurnMetrics,
  TurnStage,
  VoiceEntry,
  WebSocketConstructor,
} from './types.ts';
export type { ReconnectPolicy } from './reconnect-policy.ts';
export type { FeedbackOptions, ClientErrorOptions } from './one-shot.ts';
export type { LibraryErrorCode } from './errors.ts';
