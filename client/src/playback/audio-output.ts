import { AmbienceController } from '../ambience/ambience-controller.ts';
import { SynthAmbienceBed } from '../ambience/synth-bed.ts';
import type { EchoGuard } from '../echo-guard.ts';
import type { AmbienceOption, AudioPlayer } from '../types.ts';
import { PlaybackController, type PlaybackStoppedFrame } from './playback-controller.ts';
import { WebAudioPlayer } from './web-audio-player.ts';

export interface AudioOutputHost {
  audio(samples: Float32Array, sampleRate: number): void;
  send(frame: PlaybackStoppedFrame | { type: 'ambience'; active: boolean }): boolean;
  echoGuard(): EchoGuard | undefined;
}

const EVENTS_ONLY: AudioPlayer = { enqueue: () => undefined, clear: () => ({ remainingMs: 0 }) };

/**
 * Everything the client plays on the WebSocket transport: assistant audio through the caller's
 * player or the default Web Audio one, and the ambience bed (sharing the default player's
 * AudioContext, or its own next to a caller player).
 */
export class AudioOutput {
  readonly playback: PlaybackController;
  readonly ambience: AmbienceController;
  private readonly defaultPlayer: WebAudioPlayer | undefined;
  private ownContext: AudioContext | undefined;

  constructor(
    private readonly options: { player?: AudioPlayer; ambience?: AmbienceOption },
    host: AudioOutputHost,
  ) {
    // Without Web Audio (Node) and without a caller player, audio is delivered as events only.
    this.defaultPlayer = options.player || typeof AudioContext === 'undefined' ? undefined : new WebAudioPlayer();
    this.playback = new PlaybackController(options.player ?? this.defaultPlayer ?? EVENTS_ONLY, {
      audio: (samples, sr) => host.audio(samples, sr),
      report: (frame) => host.send(frame),
      replyAudioStarted: () => this.ambience.onReplyAudio(),
      played: (samples, ms) => host.echoGuard()?.notePlayback(samples, ms),
      cleared: () => host.echoGuard()?.clear(),
    });
    this.ambience = new AmbienceController(
      {
        createBed: () => {
          const ctx = this.defaultPlayer?.context() ?? this.context();
          return ctx ? new SynthAmbienceBed(ctx) : undefined;
        },
        stateChanged: (active) => host.send({ type: 'ambience', active }),
      },
      options.ambience,
    );
  }

  /** Inside a user gesture: lets audio start under autoplay policies. */
  async unlock(): Promise<void> {
    const player = this.options.player ?? this.defaultPlayer;
    await Promise.all([player?.unlock?.(), this.ownContext?.resume()]);
  }

  /** The conversation is over (or paused by a lost connection): silence. */
  stop(): void {
    this.ambience.stop();
    this.playback.clear();
  }

  private context(): AudioContext | undefined {
    if (typeof AudioContext === 'undefined') return undefined;
    this.ownContext ??= new AudioContext();
    return this.ownContext;
  }
}
