import type { Microphone } from './capture/microphone.ts';
import type { ConversationLink } from './conversation-link.ts';
import { libraryError, RealtimeError } from './errors.ts';
import { LiveConversation } from './live-conversation.ts';
import { sendClientError, sendFeedback } from './one-shot.ts';
import { frames } from './outbound-frames.ts';
import { float32ToPcm16 } from './pcm.ts';
import type { AudioOutput } from './playback/audio-output.ts';
import type { ResumeState } from './resume-state.ts';
import { effectiveMode, randomHex } from './start-frame.ts';
import type {
  AmbienceOption,
  ConnectOptions,
  InjectContextOptions,
  InputDevice,
  InteractionSpec,
  Mode,
  NarrationState,
  ReadyFrame,
  RealtimeClientOptions,
  ServerFrameOf,
  StartMicOptions,
  ToolChoice,
  ToolOutcome,
} from './types.ts';
import type { ToolTracker } from './tool-tracker.ts';
import { RealtimeEventTarget } from './typed-events.ts';

export { RealtimeError };

type InjectAck = ServerFrameOf<'inject_context_ack'>;
type InteractionAck = ServerFrameOf<'tool_interaction_update_ack'>;

const ACK_TIMEOUT_MS = 10_000;
const NARRATION_TIMEOUT_MS = 30_000;

/**
 * Browser client for the conversation protocol, an EventTarget. Each inbound JSON frame is
 * dispatched twice: under its `type` (e.g. `text_delta`) and under the catch-all `frame`, with
 * the frame as `event.detail`; use one style per handler, never both. Library events
 * (LibraryEventDetails) carry their fields in `event.detail` too (typed-events.ts types them by name). This is the public face: the
 * parts and the inbound flow live in LiveConversation.
 */
export class RealtimeClient extends RealtimeEventTarget {
  static readonly sendFeedback = sendFeedback;
  static readonly sendClientError = sendClientError;

  private readonly live: LiveConversation;
  private readonly link: ConversationLink;
  private readonly output: AudioOutput;
  private readonly mic: Microphone;
  private readonly tools: ToolTracker;

  constructor(options: RealtimeClientOptions) {
    super();
    if (!options?.url) throw new TypeError('RealtimeClient: url is required');
    this.live = new LiveConversation(options, (type, detail) => this.emit(type, detail));
    ({ link: this.link, output: this.output, mic: this.mic, tools: this.tools } = this.live);
    if (options.resumeState) this.importResumeState(options.resumeState);
  }

  // ── properties ────────────────────────────────────────────────────────────────────────────

  get sessionId(): string {
    return this.live.sessionId;
  }

  /** The effective mode of the start frame (voice and tool choice follow later changes). */
  get mode(): Mode {
    return structuredClone(this.live.mode);
  }

  /** True while an assistant reply is active (between turn and done). */
  get responding(): boolean {
    return this.live.activeTurn !== undefined;
  }

  /** The latest ready frame. */
  get ready(): ReadyFrame | undefined {
    return this.live.ready;
  }

  /** Library extension: the transport in use ('webrtc' only where it was asked for and is supported). */
  get transport(): 'ws' | 'webrtc' {
    return this.live.transport;
  }

  /** Library extension: whether the client-side ambience bed is audible. */
  get ambienceActive(): boolean {
    return this.output.ambience.active;
  }

  /** Library extension: connection phase (idle, connecting, open, reconnecting, closed). */
  get state(): string {
    return this.link.phase;
  }

  // ── connection ────────────────────────────────────────────────────────────────────────────

  /** Opens the socket and sends start; resolves with ready, rejects with RealtimeError(code). */
  async connect(options: ConnectOptions = {}): Promise<ReadyFrame> {
    this.live.mode = effectiveMode({ ...this.live.mode }, this.live.transport, options);
    return this.link.connect();
  }

  /** Inside a user gesture: starts audio output (and WebRTC playback) under autoplay policies. */
  async unlockAudio(): Promise<void> {
    await Promise.all([this.output.unlock(), this.link.unlock()]);
  }

  /** The state a replacement client (after a page reload) imports to resume; null without a token. */
  exportResumeState(): ResumeState | null {
    return this.link.resumeState;
  }

  /** Before the first connect only; null clears. Throws RealtimeError(resume_state_rejected). */
  importResumeState(state: ResumeState | null): void {
    this.live.importResume(state);
  }

  /** Ends the conversation cleanly (close code 1000) and clears the resume state. */
  close(): void {
    this.live.close();
  }

  /** close(), then waits for the socket's close handshake; resolves false if it took longer than timeoutMs. */
  closeAndWait(timeoutMs = 2000): Promise<boolean> {
    return this.live.closeAndWait(timeoutMs);
  }

  /** Test-only hook: closes the socket with `code` (default 4000) as if the network dropped it. */
  _debugDropSocket(code = 4000): boolean {
    return this.link.dropForTesting(code);
  }

  // ── conversation senders ──────────────────────────────────────────────────────────────────

  /** One typed user turn (text modality only); false when not sent. */
  sendText(text: string): boolean {
    if (this.live.modality !== 'text' || typeof text !== 'string' || text.length === 0 || text.length > 20000) return false;
    return this.link.send(frames.inputText(text));
  }

  /** Adds user text (role user) or silent host context (role context); resolves with inject_context_ack. */
  injectContext(text: string, options: InjectContextOptions = {}): Promise<InjectAck> {
    const messageId = options.messageId ?? `m_${randomHex(8)}`;
    if (!this.link.send(frames.injectContext(messageId, text, options.role ?? 'user', options.reply))) return Promise.reject(libraryError('not_connected', 'injectContext() needs an open connection', true));
    return this.tools.waitInject(messageId, options.timeoutMs ?? ACK_TIMEOUT_MS);
  }

  setVoice(voice: string): boolean {
    return this.link.send(frames.setVoice(voice));
  }

  /** A fresh conversation on the same connection; local playback is cleared too. */
  reset(): boolean {
    const replying = this.responding;
    const sent = this.link.send(frames.reset());
    if (sent) {
      // A reply in flight is interrupted by the server, which reports what was unheard; otherwise
      // only a playback tail is left, dropped here.
      if (!replying) this.output.playback.clear();
      this.tools.narration.clear();
    }
    return sent;
  }

  /** Library extension: stops the reply in flight (the `interrupt` frame); context stays. */
  interrupt(): boolean {
    return this.link.send(frames.interrupt());
  }

  /** The assistant finishes its reply, signs off, and the server closes with 1000 'idle'. */
  requestWrapUp(reason?: string): boolean {
    return this.link.send(frames.wrapUp(reason));
  }

  /** Any frame as is: an object goes as JSON, an ArrayBuffer or typed array as binary. */
  sendRawFrame(frame: object | ArrayBuffer | ArrayBufferView): boolean {
    if (frame instanceof ArrayBuffer) return this.link.sendBinary(frame);
    if (ArrayBuffer.isView(frame)) return this.link.sendBinary(frame.buffer.slice(frame.byteOffset, frame.byteOffset + frame.byteLength) as ArrayBuffer);
    return this.link.send(frame);
  }

  // ── tools ─────────────────────────────────────────────────────────────────────────────────

  sendToolResult(id: string, content: unknown, options: { outcome?: ToolOutcome; verified?: boolean } = {}): boolean {
    return this.link.send(frames.toolResult(id, content, options));
  }

  /** Detaches the call as a managed job; the server answers tool_deferred_ack (an event). */
  sendToolDeferred(id: string, options: { handle?: string; statusLabel?: string } = {}): boolean {
    return this.link.send(frames.toolDeferred(id, options.handle ?? id, options.statusLabel));
  }

  sendToolProgress(id: string, note: string): boolean {
    return this.link.send(frames.toolProgress(id, note));
  }

  sendToolPartialResult(id: string, content: unknown, options: { reply?: boolean; interaction?: InteractionSpec } = {}): boolean {
    return this.link.send(frames.toolPartialResult(id, content, options));
  }

  /** Closes an interaction; resolves with tool_interaction_update_ack (matched by id and interaction id). */
  sendToolInteractionUpdate(
    id: string,
    interactionId: string,
    state: 'resolved' | 'cancelled' | 'superseded',
    options: { note?: string; timeoutMs?: number } = {},
  ): Promise<InteractionAck> {
    if (!this.link.send(frames.toolInteractionUpdate(id, interactionId, state, options.note))) return Promise.reject(libraryError('not_connected', 'sendToolInteractionUpdate() needs an open connection', true));
    return this.tools.waitInteractionUpdate(id, interactionId, options.timeoutMs ?? ACK_TIMEOUT_MS);
  }

  /** Restricts tool use; oneShot reverts after the next user turn. */
  setToolChoice(choice: ToolChoice, options: { oneShot?: boolean } = {}): boolean {
    const oneShot = options.oneShot ?? false;
    const sent = this.link.send(frames.setToolChoice(choice, oneShot));
    // A lasting choice is part of the mode a reconnect sends again.
    if (sent && !oneShot) this.live.mode.tool_choice = choice;
    return sent;
  }

  sendToolCancel(id: string): boolean {
    return this.link.send(frames.toolCancel(id));
  }

  /** The latest tool_job_narration state of a job, or null. */
  narrationState(jobId: string): NarrationState | null {
    return this.tools.narration.jobState(jobId);
  }

  /** The latest tool_job_narration state of an interaction, or null. */
  interactionState(interactionId: string): NarrationState | null {
    return this.tools.narration.interactionState(interactionId);
  }

  /** Resolves once the job's narration is in one of `states`; rejects (narration_timeout) after timeoutMs. */
  waitForNarrationState(jobId: string, states: NarrationState | NarrationState[], options: { timeoutMs?: number } = {}): Promise<NarrationState> {
    return this.tools.narration.waitFor(jobId, states, options.timeoutMs ?? NARRATION_TIMEOUT_MS);
  }

  // ── ambience ──────────────────────────────────────────────────────────────────────────────

  /** Tells the server whether a client-side ambience layer is active (it does not change server audio). */
  sendAmbienceState(active: boolean): boolean {
    return this.link.send(frames.ambience(active));
  }

  setAmbience(mode: AmbienceOption): void {
    this.output.ambience.set(mode);
  }

  // ── microphone ────────────────────────────────────────────────────────────────────────────

  /** Voice only. Resolves after the first real capture frame; rejects with capture_stalled after two stalls. */
  async startMic(options: StartMicOptions = {}): Promise<void> {
    if (this.live.modality === 'text') throw libraryError('modality_mismatch', 'startMic() is for voice sessions');
    await this.mic.start(options);
  }

  stopMic(): void {
    this.mic.stop();
  }

  /** Muting: false stops sending microphone audio (a WebRTC track is disabled too); true resumes. */
  setMicEnabled(enabled: boolean): void {
    this.mic.setEnabled(enabled);
  }

  getInputDevices(): Promise<InputDevice[]> {
    return this.mic.devices();
  }

  /** Sets the preferred microphone (null: system default); a running capture moves to it. */
  setInputDevice(deviceId: string | null): Promise<void> {
    return this.mic.setDevice(deviceId);
  }

  /** Caller-owned Float32 mono 16 kHz samples → one PCM16 binary frame. False when not sent. */
  pushMicFrame(frame: Float32Array): boolean {
    if (this.live.modality === 'text' || this.live.transport === 'webrtc' || !(frame instanceof Float32Array)) return false;
    return this.link.sendBinary(float32ToPcm16(frame));
  }

  /** Same as pushMicFrame. */
  appendAudio(frame: Float32Array): boolean {
    return this.pushMicFrame(frame);
  }
}
