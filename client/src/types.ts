import type { ServerFrame, ServerFrameOf, VoiceEntry } from '../../session/protocol/server.ts';
import type { Mode } from '../../session/protocol/start.ts';
import type { ToolChoice } from '../../session/protocol/common.ts';
import type { TurnMetrics, TurnStage } from '../../session/protocol/turn-metrics.ts';
import type { ResumeState } from './resume-state.ts';
import type { AccountLimit, ClosingReason, Usage } from '../../session/protocol/usage.ts';
import type { WebSocketConstructor } from './websocket-impl.ts';

/** Wire types come from the server's zod schemas, as types only: no zod in the bundle. */
export type { ServerFrame, ServerFrameOf, Mode, ToolChoice, VoiceEntry, ResumeState, Usage, ClosingReason, AccountLimit, TurnMetrics, TurnStage, WebSocketConstructor };

export type ReadyFrame = ServerFrameOf<'ready'>;
/** done: the turn's status and its usage (the meters since the previous done). */
export type DoneFrame = ServerFrameOf<'done'>;
/** The server will close the session (reason, closes_in_ms, resumable; cancelled calls it off). */
export type SessionClosingSoonFrame = ServerFrameOf<'session_closing_soon'>;
/** The account's credit would last less than LOW_CREDIT_WARNING_S at this session's rate. */
export type LowCreditWarningFrame = ServerFrameOf<'low_credit_warning'>;

/**
 * Caller-supplied playback (the `player` option). The library decodes assistant audio to Float32
 * mono and hands it over in arrival order; the player plays it gaplessly at unity gain.
 *
 * - `enqueue(samples, sampleRate)`: queue one chunk. `samples` belongs to the player from then on.
 * - `clear()`: drop everything not yet heard, at once (barge-in, canceled, reset), and say how
 *   much was dropped. `remainingMs` is what had been queued but not yet played; `discardedMs`
 *   (optional, defaults to remainingMs) is everything thrown away, e.g. a jitter buffer's backlog.
 *   Both feed the `client_event` `playback_stopped` report that truncates the interrupted reply.
 * - `bufferedMs()` (optional): audio queued but not yet heard, for the echo guard.
 * - `unlock()` (optional): resume output inside a user gesture (autoplay policies).
 * - `close()` (optional): release resources when the client closes.
 */
export interface AudioPlayer {
  enqueue(samples: Float32Array, sampleRate: number): void;
  clear(): { remainingMs: number; discardedMs?: number };
  bufferedMs?(): number;
  unlock?(): Promise<void> | void;
  close?(): void;
}

export type AmbienceMode = 'thinking' | 'off' | 'continuous';

/** The object form of the ambience option; every field but mode has a default. */
export interface AmbienceSettings {
  mode: AmbienceMode;
  /** Thinking mode: seconds of working=true before the bed fades in (default 1.5). */
  afterS?: number;
  /** Fade-in time in seconds (default 0.8). */
  fadeInS?: number;
  /** Fade-out time in seconds (default 0.35): short, so the reply's first syllables cover it. */
  fadeOutS?: number;
  /** Linear gain of the bed, 0 to 1 (default 0.05: quiet). */
  level?: number;
}

export type AmbienceOption = AmbienceMode | AmbienceSettings;

export interface RealtimeClientOptions {
  /** {ws_url}/ws (required). */
  url: string;
  /** Must equal the scoped key's session id; generated when absent. */
  sessionId?: string;
  /** Scoped key (a persistent key only in trusted environments). */
  apiKey?: string;
  /** Mode of the start frame; `kind: 'service'` is filled in. */
  mode?: Partial<Mode>;
  /** Stable user identifier: metadata only, sent as start.client.user. */
  user?: string;
  /** IANA timezone name, sent as start.client.timezone; defaults to the browser's zone. */
  timezone?: string;
  /**
   * Caller-supplied playback; default: the library's Web Audio player. Where there is no Web Audio
   * (Node), audio is only delivered as `audio` events and counts as heard at once.
   */
  player?: AudioPlayer;
  /**
   * Library extension: the WebSocket class where there is no global one. In Node 20, the `ws`
   * package's (`import WebSocket from 'ws'`); browsers and Node 22+ need nothing.
   */
  WebSocket?: WebSocketConstructor;
  /** Opaque state from exportResumeState(), imported before the first connection (default null). */
  resumeState?: ResumeState | null;
  /** Reconnect after abnormal transport loss and resume while the token is valid (default true). */
  autoReconnect?: boolean;
  /** Initial reconnect delay in ms (default 500). */
  reconnectBaseMs?: number;
  /** Maximum reconnect delay in ms (default 5000). */
  reconnectMaxMs?: number;
  /** Reconnect attempts before the terminal `failed` (code reconnect_exhausted) (default 12). */
  maxReconnectAttempts?: number;
  /** Support diagnostic only (default false): emits a `raw` event for every frame in and out. */
  rawAssist?: boolean;
  /** Preferred microphone; null follows the system default (default null). */
  inputDeviceId?: string | null;
  /** Time allowed for the first capture frame, in ms (default 2000). */
  captureStartupTimeoutMs?: number;
  /** Media path (default 'ws'). 'webrtc' falls back to 'ws' on Safari/WebKit. */
  transport?: 'ws' | 'webrtc';
  /** Client-side background bed on the WebSocket transport (default 'thinking'). */
  ambience?: AmbienceOption;
  /**
   * Library extension, not in SPEC: the downlink format asked for in start.audio
   * (default pcm16 at 16000 Hz, SPEC's default).
   */
  downlink?: { encoding?: 'pcm16' | 'pcm_f32le'; sampleRate?: number };
}

export interface ConnectOptions {
  /** Overrides mode.temperature for this connection. */
  temperature?: number;
  /** Sends mode.greeting=false: the assistant does not open the conversation. */
  noGreeting?: boolean;
}

export interface StartMicOptions {
  /** URL of a capture worklet module registering `parley-capture` (default: the built-in one). */
  workletUrl?: string;
  /**
   * Library-side echo guard on top of the browser's echo cancellation (default false): while
   * assistant audio is playing, microphone frames much quieter than the playback are sent as
   * silence, so residual echo cannot barge in; louder speech still gets through.
   */
  sdkAec?: boolean;
  /** Microphone to use for this capture (default: inputDeviceId, then the system default). */
  deviceId?: string | null;
}

export interface InjectContextOptions {
  /** Client-generated id, max 128 characters (default: generated). */
  messageId?: string;
  /** 'user' (typed user text) or 'context' (silent host context); default 'user'. */
  role?: 'user' | 'context';
  /** Ask for a reply (server default: true for user, false for context). */
  reply?: boolean;
  /** How long to wait for inject_context_ack (default 10000 ms). */
  timeoutMs?: number;
}

export type ToolOutcome = 'succeeded' | 'failed' | 'cancelled' | 'timed_out' | 'unknown';

export interface InteractionSpec {
  id?: string;
  prompt: string;
  options?: string[];
  resolver?: { tool: string; args?: Record<string, unknown>; option_args?: Record<string, Record<string, unknown>>; answer_arg?: string };
}

export type NarrationState = ServerFrameOf<'tool_job_narration'>['state'];

export interface InputDevice {
  deviceId: string;
  label: string;
  groupId: string;
}

/** Detail of the client-library-only events (server frames carry the frame itself). */
export interface LibraryEventDetails {
  warming_up: { attempt: number; device_id: string | null };
  recovering: { code: string; device_id: string | null };
  failed: { code: string; error: Error };
  listening: { device_id: string | null };
  /** Library extension: the microphone's level every 100 ms while capturing (peak 0–1, RMS dBFS). */
  mic_level: { peak: number; dbfs: number };
  devices_changed: { devices: InputDevice[]; device_id: string | null; active_device_id: string | null };
  input_device_changed: { device_id: string | null; previous_device_id: string | null; reason: 'user' | 'device_lost' };
  reconnecting: { attempt: number; delay_ms: number; code: number; reason: string };
  reconnected: { attempt: number; resumed: true };
  resume_state: { state: ResumeState | null };
  resume_failed: { error: { code: string; retryable: boolean; detail: string } };
  session_end: { code: number; reason: string };
  audio: { samples: Float32Array; sr: number };
  /** Library extension: the conversation is over for this client (not emitted while reconnecting). */
  close: { code: number; reason: string };
  /** Library extension, rawAssist only: every frame in and out. */
  raw: { direction: 'in' | 'out'; frame: unknown };
}

/** The catch-all event name: every inbound JSON frame is dispatched under it too. */
export const FRAME_EVENT = 'frame';

/**
 * Every event a RealtimeClient dispatches, by name: each server frame under its `type`, all of
 * them under `frame`, and the library's own events; the payload is always `event.detail`.
 */
export type RealtimeClientEventMap = { [K in ServerFrame['type']]: CustomEvent<ServerFrameOf<K>> } & { [FRAME_EVENT]: CustomEvent<ServerFrame> } & {
  [K in keyof LibraryEventDetails]: CustomEvent<LibraryEventDetails[K]>;
};
