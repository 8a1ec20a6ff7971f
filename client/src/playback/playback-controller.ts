import { decodeDownlink, durationMs, type DownlinkEncoding } from '../pcm.ts';
import type { AudioPlayer } from '../types.ts';

export interface PlaybackStoppedFrame {
  type: 'client_event';
  event: 'playback_stopped';
  remaining_ms: number;
  discarded_ms: number;
  barge_seq?: number;
}

export interface PlaybackHost {
  /** The `audio` event: every chunk handed to the player. */
  audio(samples: Float32Array, sampleRate: number): void;
  /** The playback report for the server (truncates the interrupted utterance). */
  report(frame: PlaybackStoppedFrame): void;
  /** The first audio of a reply (the ambience bed fades out under it). */
  replyAudioStarted(): void;
  /** Audio handed to the player, with its duration (for the echo guard). */
  played(samples: Float32Array, ms: number): void;
  /** Playback was cleared (for the echo guard). */
  cleared(): void;
}

/**
 * Assistant audio on the WebSocket transport: decodes binary frames per ready.audio, hands them
 * to the player, and on `interrupted` (clear) or `canceled` drops what is still unplayed and
 * reports it with `client_event` `playback_stopped`. Binary frames carry no turn id, so after a
 * stop any audio until the next `turn` frame belongs to the stopped reply and is discarded.
 */
export class PlaybackController {
  private encoding: DownlinkEncoding = 'pcm16';
  private sampleRate = 16000;
  private dropping = false;
  private replyHasAudio = false;

  constructor(
    readonly player: AudioPlayer,
    private readonly host: PlaybackHost,
  ) {}

  /** From ready.audio (absent in text sessions). */
  configure(audio: { output_encoding: DownlinkEncoding; output_sr: number } | undefined): void {
    if (!audio) return;
    this.encoding = audio.output_encoding;
    this.sampleRate = audio.output_sr;
  }

  get format(): { encoding: DownlinkEncoding; sampleRate: number } {
    return { encoding: this.encoding, sampleRate: this.sampleRate };
  }

  onAudio(bytes: ArrayBuffer): void {
    if (this.dropping) return;
    const samples = decodeDownlink(bytes, this.encoding);
    if (samples.length === 0) return;
    if (!this.replyHasAudio) {
      this.replyHasAudio = true;
      this.host.replyAudioStarted();
    }
    this.host.audio(samples, this.sampleRate);
    this.host.played(samples, durationMs(samples.length, this.sampleRate));
    this.player.enqueue(samples, this.sampleRate);
  }

  onFrame(frame: { type: string; clear?: unknown; barge_seq?: unknown }): void {
    switch (frame.type) {
      case 'turn':
        this.dropping = false;
        this.replyHasAudio = false;
        return;
      case 'interrupted':
        if (frame.clear !== false) this.stop(typeof frame.barge_seq === 'number' ? frame.barge_seq : undefined);
        return;
      case 'canceled':
        this.stop(undefined);
        return;
    }
  }

  /** Drops unplayed audio without a report (reset, close). */
  clear(): void {
    this.player.clear();
    this.host.cleared();
    this.dropping = true;
  }

  private stop(bargeSeq: number | undefined): void {
    const { remainingMs, discardedMs } = this.player.clear();
    this.host.cleared();
    this.dropping = true;
    const remaining = Math.max(0, Math.round(Number.isFinite(remainingMs) ? remainingMs : 0));
    const discarded = Math.max(0, Math.round(Number.isFinite(discardedMs) ? discardedMs! : remaining));
    this.host.report({
      type: 'client_event',
      event: 'playback_stopped',
      remaining_ms: remaining,
      discarded_ms: discarded,
      ...(bargeSeq !== undefined ? { barge_seq: bargeSeq } : {}),
    });
  }
}
