import type { AmbienceMode, AmbienceOption } from '../types.ts';

/** A bed that can fade; the Web Audio one is SynthAmbienceBed, tests use a fake. */
export interface AmbienceBed {
  fadeIn(level: number, seconds: number): void;
  fadeOut(seconds: number): void;
  stop(): void;
}

export interface AmbienceHost {
  /** Creates the bed on first use; undefined when audio output is not available. */
  createBed(): AmbienceBed | undefined;
  /** The bed became audible (true) or fades out (false): sent as the `ambience` frame. */
  stateChanged(active: boolean): void;
}

export interface ResolvedAmbience {
  mode: AmbienceMode;
  afterS: number;
  fadeInS: number;
  fadeOutS: number;
  level: number;
}

export const AMBIENCE_DEFAULTS: Omit<ResolvedAmbience, 'mode'> = { afterS: 1.5, fadeInS: 0.8, fadeOutS: 0.35, level: 0.05 };

export function resolveAmbience(option: AmbienceOption | undefined): ResolvedAmbience {
  if (option === undefined) return { mode: 'thinking', ...AMBIENCE_DEFAULTS };
  if (typeof option === 'string') return { mode: option, ...AMBIENCE_DEFAULTS };
  const num = (v: number | undefined, d: number, max: number) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.min(v, max) : d);
  return {
    mode: option.mode ?? 'thinking',
    afterS: num(option.afterS, AMBIENCE_DEFAULTS.afterS, 60),
    fadeInS: num(option.fadeInS, AMBIENCE_DEFAULTS.fadeInS, 30),
    fadeOutS: num(option.fadeOutS, AMBIENCE_DEFAULTS.fadeOutS, 30),
    level: num(option.level, AMBIENCE_DEFAULTS.level, 1),
  };
}

/**
 * When the client-side bed plays (WebSocket transport only; on WebRTC the server mixes
 * background_audio itself). thinking: fades in after afterS of working=true and out when
 * working ends or under the reply's first audio; continuous: plays from ready to the end of
 * the session; off: never.
 */
export class AmbienceController {
  private settings: ResolvedAmbience;
  private enabled = false;
  private working = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private bed: AmbienceBed | undefined;
  private audible = false;

  constructor(
    private readonly host: AmbienceHost,
    option: AmbienceOption | undefined,
  ) {
    this.settings = resolveAmbience(option);
  }

  get active(): boolean {
    return this.audible;
  }

  get mode(): ResolvedAmbience {
    return { ...this.settings };
  }

  set(option: AmbienceOption): void {
    this.settings = resolveAmbience(option);
    this.cancelTimer();
    if (!this.enabled) return;
    if (this.settings.mode === 'continuous') this.fadeIn();
    else if (this.settings.mode === 'off') this.fadeOut();
    else if (this.working) this.arm();
    else this.fadeOut();
  }

  /** The session is ready on a transport: the bed runs only on the WebSocket one. */
  enable(onWebSocket: boolean): void {
    this.enabled = onWebSocket;
    if (onWebSocket && this.settings.mode === 'continuous') this.fadeIn();
  }

  onWorking(active: boolean): void {
    this.working = active;
    if (!this.enabled || this.settings.mode !== 'thinking') return;
    if (active) this.arm();
    else {
      this.cancelTimer();
      this.fadeOut();
    }
  }

  onReplyAudio(): void {
    if (this.settings.mode !== 'thinking') return;
    this.cancelTimer();
    this.fadeOut();
  }

  /** Connection lost or closed: silence at once. */
  stop(): void {
    this.enabled = false;
    this.working = false;
    this.cancelTimer();
    if (this.audible) this.setAudible(false);
    this.bed?.stop();
  }

  private arm(): void {
    if (this.timer || this.audible) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.working) this.fadeIn();
    }, this.settings.afterS * 1000);
  }

  private fadeIn(): void {
    if (this.audible) return;
    this.bed ??= this.host.createBed();
    this.bed?.fadeIn(this.settings.level, this.settings.fadeInS);
    this.setAudible(true);
  }

  private fadeOut(): void {
    if (!this.audible) return;
    this.bed?.fadeOut(this.settings.fadeOutS);
    this.setAudible(false);
  }

  private setAudible(on: boolean): void {
    this.audible = on;
    this.host.stateChanged(on);
  }

  private cancelTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
