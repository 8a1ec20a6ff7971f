import { VAD_FRAME_MS } from '../../media/vad.ts';

/** Frames remembered: 5 s, longer than any trailing silence that can end a turn. */
const RING = 256;

/** When a voice turn's moments happened, as the waterfall (turn-observation.ts) needs them. */
export interface TurnEndTiming {
  /** The arrival of the last voiced frame (its last sample). */
  lastVoicedAt: number;
  /** The endpointer's decision. */
  decidedAt: number;
}

/**
 * When each 20 ms uplink frame arrived, and which of the last four the VAD called speech. The
 * voice stages run from a frame's arrival (the speech onset, the last voiced sample), not from
 * when the VAD and the endpointer got to it, so a batching VAD does not shorten them.
 */
export class FrameArrivals {
  private readonly at = new Float64Array(RING);
  private arrived = 0;
  private decided = 0;
  /** Bit k: the frame k frames before the current one was speech. */
  private voiced = 0;

  /** A frame completed at `now`. */
  arrive(now: number): void {
    this.at[this.arrived % RING] = now;
    this.arrived += 1;
  }

  /** The next frame in arrival order got its VAD decision. */
  decide(speech: boolean): void {
    this.decided += 1;
    this.voiced = ((this.voiced << 1) | (speech ? 1 : 0)) & 0xf;
  }

  /** Arrival of the frame `framesAgo` before the one just decided (the oldest remembered past the ring). */
  ago(framesAgo: number): number {
    const index = Math.max(this.decided - 1 - framesAgo, this.decided - RING, 0);
    return this.at[index % RING]!;
  }

  /** A segment just opened: the first voiced frame among the last four is its onset. */
  onset(): number {
    let k = 3;
    while (k > 0 && !(this.voiced & (1 << k))) k -= 1;
    return this.ago(k);
  }

  /** The endpointer decided now, after `silentMs` of trailing silence. */
  turnEnd(silentMs: number, now: number): TurnEndTiming {
    return { lastVoicedAt: this.ago(Math.round(silentMs / VAD_FRAME_MS)), decidedAt: now };
  }
}
