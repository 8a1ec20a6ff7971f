import { Microphone } from './capture/microphone.ts';
import { ConversationLink } from './conversation-link.ts';
import { libraryError, type RealtimeError } from './errors.ts';
import { float32ToPcm16 } from './pcm.ts';
import { AudioOutput } from './playback/audio-output.ts';
import { reconnectPolicyFrom } from './reconnect-policy.ts';
import { checkImport, type ResumeState } from './resume-state.ts';
import { browserTimezone, buildStartFrame, effectiveMode, generateSessionId } from './start-frame.ts';
import { ToolTracker } from './tool-tracker.ts';
import { FRAME_EVENT, type Mode, type ReadyFrame, type RealtimeClientOptions } from './types.ts';
import { effectiveTransport } from './user-agent.ts';

type Frame = { type: string } & Record<string, unknown>;
export type Emit = (type: string, detail: unknown) => void;

/**
 * The client's parts (microphone, audio output, connection link, tool tracker) wired together,
 * and what the client knows from the frames it received: the ready frame, the live mode, the
 * reply in flight. RealtimeClient is the public face over it.
 */
export class LiveConversation {
  readonly transport: 'ws' | 'webrtc';
  readonly mic: Microphone;
  readonly output: AudioOutput;
  readonly link: ConversationLink;
  readonly tools = new ToolTracker();
  readonly sessionIdFixed: boolean;
  sessionId: string;
  /** The start frame's mode; voice and a lasting tool choice follow later changes. */
  mode: Mode;
  ready: ReadyFrame | undefined;
  /** The turn id of the reply in flight (between turn and done). */
  activeTurn: string | undefined;
  connectedOnce = false;

  constructor(
    private readonly options: RealtimeClientOptions,
    private readonly emit: Emit,
  ) {
    this.sessionIdFixed = options.sessionId !== undefined;
    this.sessionId = options.sessionId ?? generateSessionId();
    const ua = typeof navigator === 'undefined' ? '' : navigator.userAgent;
    const transport = effectiveTransport(options.transport, ua, typeof RTCPeerConnection !== 'undefined');
    this.transport = transport;
    this.mode = effectiveMode(options.mode, transport);
    this.mic = new Microphone(
      {
        emit: (type, detail) => emit(type, detail),
        frame: (samples) => {
          // On WebRTC the track carries the audio; on the WebSocket, binary PCM16 frames.
          if (transport === 'ws') this.link.sendBinary(float32ToPcm16(samples));
        },
        track: (track) => this.link.setMicTrack(track),
        onWebRtc: transport === 'webrtc',
      },
      { deviceId: options.inputDeviceId ?? null, startupTimeoutMs: options.captureStartupTimeoutMs ?? 2000 },
    );
    this.output = new AudioOutput(options, {
      audio: (samples, sr) => emit('audio', { samples, sr }),
      // On WebRTC the server paces and measures playback itself: no playback report from here.
      send: (frame) => (transport === 'webrtc' ? false : this.link.send(frame)),
      echoGuard: () => this.mic.echoGuard,
    });
    this.link = new ConversationLink(
      { url: options.url, sessionId: () => this.sessionId, transport, autoReconnect: options.autoReconnect ?? true, policy: reconnectPolicyFrom(options) },
      {
        startFrame: (resumeToken) => this.startFrame(resumeToken),
        frame: (frame) => this.onFrame(frame),
        audio: (bytes) => this.output.playback.onAudio(bytes),
        ready: (frame, resumed) => this.onReady(frame, resumed),
        lost: (error) => this.onLost(error),
        ended: () => this.teardown(),
        emit: (type, detail) => emit(type, detail),
        micTrack: () => this.mic.track,
        raw: (direction, frame) => {
          if (options.rawAssist) emit('raw', { direction, frame });
        },
      },
    );
  }

  get modality(): 'voice' | 'text' {
    return this.options.mode?.modality === 'text' ? 'text' : 'voice';
  }

  importResume(state: ResumeState | null): void {
    if (this.connectedOnce || this.link.phase !== 'idle') {
      throw libraryError('resume_state_rejected', 'importResumeState() is allowed only before connect()');
    }
    if (state === null) return this.link.importResume(null);
    const parsed = checkImport(state, { modality: this.modality, sessionId: this.sessionIdFixed ? this.sessionId : undefined });
    this.sessionId = parsed.sessionId;
    this.link.importResume(parsed);
  }

  close(): void {
    this.link.close();
    this.teardown();
  }

  /** Resolves false when the socket's close handshake took longer than timeoutMs. */
  async closeAndWait(timeoutMs: number): Promise<boolean> {
    const socket = this.link.close();
    this.teardown();
    if (!socket) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const closed = await Promise.race([socket.whenClosed().then(() => true), timedOut]);
    clearTimeout(timer);
    return closed;
  }

  /** The client is done with this conversation: capture, playback and waiting requests stop. */
  teardown(): void {
    this.activeTurn = undefined;
    this.mic.close();
    this.output.stop();
    this.tools.failAll(libraryError('connection_closed', 'the client closed'));
  }

  private startFrame(resumeToken: string | undefined) {
    const { options } = this;
    return buildStartFrame({
      sessionId: this.sessionId,
      apiKey: options.apiKey,
      mode: this.mode,
      user: options.user,
      timezone: options.timezone ?? browserTimezone(),
      transport: this.transport,
      resumeToken,
      downlink: { encoding: options.downlink?.encoding ?? 'pcm16', sampleRate: options.downlink?.sampleRate ?? 16000 },
      userAgent: typeof navigator === 'undefined' ? undefined : navigator.userAgent,
    });
  }

  private onReady(frame: ReadyFrame, resumed: boolean): void {
    this.connectedOnce = true;
    this.ready = frame;
    this.mode.voice = frame.voice;
    this.output.playback.configure(frame.audio);
    // SPEC: interaction state does not survive a resume.
    if (resumed) this.tools.narration.clear();
    this.output.ambience.enable(this.transport === 'ws' && frame.modality === 'voice');
  }

  private onFrame(frame: Frame): void {
    switch (frame.type) {
      case 'turn':
        this.activeTurn = String(frame.turn_id);
        break;
      case 'done':
        if (frame.turn_id === this.activeTurn) this.activeTurn = undefined;
        break;
      case 'voice':
        if (typeof frame.voice === 'string') this.mode.voice = frame.voice;
        break;
      case 'working':
        this.output.ambience.onWorking(frame.active === true);
        break;
    }
    this.tools.onFrame(frame);
    this.output.playback.onFrame(frame);
    this.emit(frame.type, frame);
    this.emit(FRAME_EVENT, frame);
  }

  private onLost(error: RealtimeError): void {
    this.activeTurn = undefined;
    this.output.ambience.stop();
    this.tools.failAll(error);
  }
}
