import { EchoGuard } from '../echo-guard.ts';
import type { RealtimeError } from '../errors.ts';
import type { InputDevice, LibraryEventDetails, StartMicOptions } from '../types.ts';
import { listInputDevices, watchInputDevices } from './input-devices.ts';
import { LevelMeter } from './level-meter.ts';
import { MicCapture } from './mic-capture.ts';

export interface MicrophoneHost {
  emit<K extends keyof LibraryEventDetails>(type: K, detail: LibraryEventDetails[K]): void;
  /** One 20 ms, 16 kHz frame ready for the uplink (after muting and the echo guard). */
  frame(samples: Float32Array): void;
  /** The capture track changed (WebRTC swaps it into its sender); null when capture stopped. */
  track(track: MediaStreamTrack | null): Promise<void>;
  /** WebRTC carries the track itself: the track is disabled when muted. */
  readonly onWebRtc: boolean;
}

/**
 * The client's microphone: one MicCapture at a time, the preferred device, mute, the optional
 * echo guard, and device changes (devices_changed, input_device_changed, moving off a device that
 * disappeared or ended).
 */
export class Microphone {
  private capture: MicCapture | undefined;
  private enabled = true;
  private preferred: string | null;
  private guard: EchoGuard | undefined;
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly host: MicrophoneHost,
    options: { deviceId: string | null; startupTimeoutMs: number },
    private readonly startupTimeoutMs = options.startupTimeoutMs,
  ) {
    this.preferred = options.deviceId;
  }

  get track(): MediaStreamTrack | undefined {
    return this.capture?.track;
  }

  /** For the echo guard: the client reports what it plays. */
  get echoGuard(): EchoGuard | undefined {
    return this.guard;
  }

  async start(options: StartMicOptions = {}): Promise<void> {
    this.stop();
    const deviceId = options.deviceId !== undefined ? options.deviceId : this.preferred;
    this.guard = options.sdkAec ? new EchoGuard() : undefined;
    const emit = this.host.emit.bind(this.host);
    const meter = new LevelMeter((level) => emit('mic_level', level));
    const capture = new MicCapture(
      {
        warmingUp: (attempt, device) => emit('warming_up', { attempt, device_id: device }),
        recovering: (code, device) => emit('recovering', { code, device_id: device }),
        listening: (device) => emit('listening', { device_id: device }),
        failed: (error: RealtimeError) => emit('failed', { code: error.code, error }),
        frame: (samples) => {
          meter.push(samples);
          this.host.frame(this.guard ? this.guard.filter(samples) : samples);
        },
        ended: () => void this.onEnded(),
      },
      { deviceId, startupTimeoutMs: this.startupTimeoutMs, ...(options.workletUrl ? { workletUrl: options.workletUrl } : {}) },
    );
    capture.enabled = this.enabled;
    this.capture = capture;
    this.unwatch ??= watchInputDevices(() => void this.onDevicesChanged());
    try {
      await capture.start();
    } catch (error) {
      if (this.capture === capture) this.capture = undefined;
      throw error;
    }
    if (this.capture === capture) await this.host.track(capture.track ?? null);
  }

  stop(): void {
    const capture = this.capture;
    this.capture = undefined;
    if (!capture) return;
    capture.stop();
    void this.host.track(null).catch(() => undefined);
  }

  /** false: nothing is sent (and a WebRTC track is disabled); true: frames flow again. */
  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    if (this.capture) this.capture.enabled = enabled;
    const track = this.capture?.track;
    if (track && this.host.onWebRtc) track.enabled = enabled;
  }

  devices(): Promise<InputDevice[]> {
    return listInputDevices();
  }

  async setDevice(deviceId: string | null): Promise<void> {
    const previous = this.capture?.activeDeviceId ?? this.preferred;
    this.preferred = deviceId;
    if (this.capture) await this.start({ deviceId, sdkAec: this.guard !== undefined });
    this.host.emit('input_device_changed', { device_id: deviceId, previous_device_id: previous, reason: 'user' });
  }

  close(): void {
    this.stop();
    this.unwatch?.();
    this.unwatch = undefined;
  }

  /** The capture track ended (unplugged, revoked): back to the system default. */
  private async onEnded(): Promise<void> {
    const previous = this.capture?.activeDeviceId ?? this.preferred;
    this.host.emit('recovering', { code: 'device_lost', device_id: previous });
    try {
      await this.start({ deviceId: null, sdkAec: this.guard !== undefined });
      this.host.emit('input_device_changed', { device_id: null, previous_device_id: previous, reason: 'device_lost' });
    } catch {
      // start() already emitted failed
    }
  }

  private async onDevicesChanged(): Promise<void> {
    const devices = await listInputDevices();
    this.host.emit('devices_changed', { devices, device_id: this.preferred, active_device_id: this.capture?.activeDeviceId ?? null });
    const wanted = this.preferred;
    if (this.capture && wanted && !devices.some((d) => d.deviceId === wanted)) {
      // The preferred microphone is gone: follow the system default.
      this.preferred = null;
      await this.start({ deviceId: null, sdkAec: this.guard !== undefined }).catch(() => undefined);
      this.host.emit('input_device_changed', { device_id: null, previous_device_id: wanted, reason: 'device_lost' });
    }
  }
}
