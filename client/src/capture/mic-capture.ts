import { libraryError, RealtimeError } from '../errors.ts';
import { FramePacker, UPLINK_FRAME_SAMPLES, UPLINK_RATE } from '../frame-packer.ts';
import { StreamResampler } from '../resampler.ts';
import { CAPTURE_PROCESSOR, captureWorkletUrl } from './worklet-source.ts';

export interface CaptureHost {
  warmingUp(attempt: number, deviceId: string | null): void;
  recovering(code: string, deviceId: string | null): void;
  listening(deviceId: string | null): void;
  failed(error: RealtimeError): void;
  /** One 20 ms frame of 16 kHz mono audio (all-zero frames are valid silence). */
  frame(samples: Float32Array): void;
  /** The track ended after capture had started (device unplugged, permission revoked). */
  ended(): void;
}

export interface CaptureOptions {
  deviceId: string | null;
  workletUrl?: string;
  startupTimeoutMs: number;
}

/** Attempts before capture_stalled: the first, and one retry after releasing everything. */
const ATTEMPTS = 2;

/**
 * Microphone capture: getUserMedia (mono, echo cancellation on, noise suppression and automatic
 * gain control off), an AudioWorklet at the context's rate, then resampling to 16 kHz and
 * 20 ms frames on the main thread. start() resolves after the first real frame: one that
 * arrives while the track is live and unmuted (a muted track is one whose source delivers
 * nothing, although Web Audio keeps rendering zeros for it). No real frame within
 * startupTimeoutMs is a stall: everything is released and tried once more; a second stall
 * rejects with capture_stalled.
 */
export class MicCapture {
  private stream: MediaStream | undefined;
  private ctx: AudioContext | undefined;
  private node: AudioWorkletNode | undefined;
  private resampler: StreamResampler | undefined;
  private readonly packer = new FramePacker(UPLINK_FRAME_SAMPLES);
  private live = false;
  private stopped = false;
  private firstFrame: (() => void) | undefined;
  enabled = true;

  constructor(
    private readonly host: CaptureHost,
    private readonly options: CaptureOptions,
  ) {}

  get track(): MediaStreamTrack | undefined {
    return this.stream?.getAudioTracks()[0];
  }

  /** The device actually in use, as the browser reports it. */
  get activeDeviceId(): string | null {
    return this.track?.getSettings().deviceId ?? null;
  }

  get running(): boolean {
    return this.live && !this.stopped;
  }

  async start(): Promise<void> {
    const deviceId = this.options.deviceId;
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      this.host.warmingUp(attempt, deviceId);
      let delivered: boolean;
      try {
        delivered = await this.attempt();
      } catch (error) {
        this.release();
        if (this.stopped) throw libraryError('capture_failed', 'stopMic() was called while the microphone was starting');
        const failure = captureError(error);
        this.host.failed(failure);
        throw failure;
      }
      if (delivered) {
        this.host.listening(this.activeDeviceId ?? deviceId);
        return;
      }
      this.release();
      if (attempt < ATTEMPTS) this.host.recovering('capture_stalled', deviceId);
    }
    const stalled = libraryError('capture_stalled', `no audio from the microphone within ${this.options.startupTimeoutMs} ms, twice`, true);
    this.host.failed(stalled);
    throw stalled;
  }

  stop(): void {
    this.stopped = true;
    this.firstFrame?.();
    this.release();
  }

  /** One attempt: true once a real frame arrived, false on a stall. */
  private async attempt(): Promise<boolean> {
    if (!navigator.mediaDevices?.getUserMedia) throw libraryError('capture_failed', 'getUserMedia is not available (insecure context?)');
    const audio: MediaTrackConstraints = { channelCount: 1, echoCancellation: true, noiseSuppression: false, autoGainControl: false };
    if (this.options.deviceId) audio.deviceId = { exact: this.options.deviceId };
    this.stream = await navigator.mediaDevices.getUserMedia({ audio });
    if (this.stopped) throw new Error('stopped');
    const track = this.stream.getAudioTracks()[0];
    if (!track) throw libraryError('mic_not_found', 'getUserMedia returned no audio track');
    track.addEventListener('ended', () => {
      if (this.live && !this.stopped) this.host.ended();
    });

    const ctx = new AudioContext();
    this.ctx = ctx;
    // resume() can stay pending without a user gesture; the stall timer covers that case.
    void ctx.resume().catch(() => undefined);
    await ctx.audioWorklet.addModule(this.options.workletUrl ?? captureWorkletUrl());
    if (this.stopped) throw new Error('stopped');
    this.resampler = new StreamResampler(ctx.sampleRate, UPLINK_RATE);
    this.packer.flush();
    const node = new AudioWorkletNode(ctx, CAPTURE_PROCESSOR, {
      numberOfInputs: 1,
      numberOfOutputs: 0,
      channelCount: 1,
      channelCountMode: 'explicit',
      channelInterpretation: 'speakers',
      processorOptions: { chunkSamples: Math.round(ctx.sampleRate / 50) },
    });
    this.node = node;
    const delivered = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), this.options.startupTimeoutMs);
      this.firstFrame = () => {
        clearTimeout(timer);
        resolve(!this.stopped);
      };
    });
    node.port.onmessage = (event: MessageEvent) => this.onChunk(event.data as Float32Array, track);
    ctx.createMediaStreamSource(this.stream).connect(node);
    const ok = await delivered;
    this.firstFrame = undefined;
    if (this.stopped) throw new Error('stopped');
    return ok;
  }

  private onChunk(chunk: Float32Array, track: MediaStreamTrack): void {
    if (this.stopped) return;
    if (!this.live) {
      if (track.readyState !== 'live' || track.muted) return;
      this.live = true;
      this.firstFrame?.();
    }
    if (!this.resampler) return;
    for (const frame of this.packer.push(this.resampler.process(chunk))) {
      if (this.enabled) this.host.frame(frame);
    }
  }

  private release(): void {
    this.live = false;
    if (this.node) {
      this.node.port.onmessage = null;
      this.node.disconnect();
    }
    this.node = undefined;
    for (const track of this.stream?.getTracks() ?? []) track.stop();
    this.stream = undefined;
    void this.ctx?.close().catch(() => undefined);
    this.ctx = undefined;
  }
}

function captureError(error: unknown): RealtimeError {
  if (error instanceof RealtimeError) return error;
  const name = (error as { name?: string } | null)?.name;
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'NotAllowedError' || name === 'SecurityError') return libraryError('mic_permission_denied', message);
  if (name === 'NotFoundError' || name === 'OverconstrainedError') return libraryError('mic_not_found', message);
  return libraryError('capture_failed', message);
}
