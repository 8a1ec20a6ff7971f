import { VAD_FRAME_MS } from './vad.ts';

/**
 * End-of-turn detection over per-frame VAD decisions. Pure and clock-free: it counts 20 ms
 * frames, so tests drive it frame by frame and the session drives it in real time.
 *
 * turn_end_threshold (0.05 to 0.5, lower waits longer) maps linearly onto the trailing silence
 * that ends a turn: silence_ms = 200 + (0.5 - threshold) * 1200, so 0.05 → 740 ms,
 * 0.45 (the default) → 260 ms, 0.5 → 200 ms.
 */

export const DEFAULT_TURN_END_THRESHOLD = 0.45;

/** A frame this far under the segment's voiced level counts as silence (speech tails, room tone). */
const TAIL_DROP_DB = 30;

export function silenceMsForThreshold(threshold: number = DEFAULT_TURN_END_THRESHOLD): number {
  const t = Math.min(0.5, Math.max(0.05, threshold));
  return Math.round(200 + (0.5 - t) * 1200);
}

export interface EndpointerOptions {
  /** Trailing silence that ends a turn. */
  endSilenceMs: number;
  /** Voiced frames among the last four needed to open a speech segment (3 → 60 ms). */
  startVoicedFrames: number;
  /** Voiced time in a segment before it may interrupt the assistant (echo and clicks stay out). */
  bargeInMinSpeechMs: number;
  /** A segment with less voiced time than this is noise: no transcript, no turn. */
  minUtteranceSpeechMs: number;
  /** Audio kept from before the speech onset so the first syllable reaches recognition. */
  prerollMs: number;
  /** Silence after which an eager (flow) reply may start; 0 disables. */
  eagerSilenceMs: number;
}

export function endpointerOptions(threshold?: number, eager = false): EndpointerOptions {
  const endSilenceMs = silenceMsForThreshold(threshold);
  return {
    endSilenceMs,
    startVoicedFrames: 3,
    bargeInMinSpeechMs: 100,
    minUtteranceSpeechMs: 160,
    prerollMs: 200,
    eagerSilenceMs: eager ? Math.max(100, Math.round(endSilenceMs / 2 / VAD_FRAME_MS) * VAD_FRAME_MS) : 0,
  };
}

export type EndpointEvent =
  | { type: 'speech_start'; preroll: Int16Array[] }
  | { type: 'speech_confirmed' }
  | { type: 'eager_end'; silentMs: number }
  | { type: 'speech_resumed' }
  /** silentMs: the trailing silence counted, i.e. how many frames ago the last voiced one was. */
  | { type: 'turn_end'; voicedMs: number; silentMs: number }
  | { type: 'noise_dropped'; voicedMs: number };

export class Endpointer {
  private recent: boolean[] = [];
  private preroll: Int16Array[] = [];
  private inSegment = false;
  private voicedMs = 0;
  private silentMs = 0;
  private confirmed = false;
  private eagerFired = false;
  /** Running loudness of the segment's voiced frames (dBFS), for the tail check. */
  private voicedLevel: number | undefined;

  constructor(private options: EndpointerOptions) {}

  get active(): boolean {
    return this.inSegment;
  }

  reconfigure(options: EndpointerOptions): void {
    this.options = options;
  }

  /** Feeds one 20 ms frame and its VAD decision; returns what happened at this frame. */
  push(frame: Int16Array, vadSpeech: boolean, levelDbfs: number = Number.POSITIVE_INFINITY): EndpointEvent[] {
    const events: EndpointEvent[] = [];
    const o = this.options;
    // WebRTC VAD keeps calling a speech tail "speech" for about 100 ms after the voice stops.
    // Inside a segment, a frame far below the segment's voiced level is silence whatever the VAD
    // says, so the trailing silence is counted from the real end of speech.
    const speech = vadSpeech && !(this.inSegment && this.voicedLevel !== undefined && levelDbfs < this.voicedLevel - TAIL_DROP_DB);
    if (!this.inSegment) {
      this.recent.push(speech);
      if (this.recent.length > 4) this.recent.shift();
      this.preroll.push(frame);
      const maxPreroll = Math.ceil(o.prerollMs / VAD_FRAME_MS) + 4;
      if (this.preroll.length > maxPreroll) this.preroll.shift();
      if (this.recent.filter(Boolean).length >= o.startVoicedFrames) {
        this.inSegment = true;
        this.voicedMs = this.recent.filter(Boolean).length * VAD_FRAME_MS;
        this.silentMs = 0;
        this.confirmed = false;
        this.eagerFired = false;
        this.voicedLevel = undefined;
        events.push({ type: 'speech_start', preroll: this.preroll });
        this.preroll = [];
        this.recent = [];
        this.checkConfirmed(events);
      }
      return events;
    }
    if (speech) {
      this.voicedMs += VAD_FRAME_MS;
      if (Number.isFinite(levelDbfs)) this.voicedLevel = this.voicedLevel === undefined ? levelDbfs : Math.max(levelDbfs, this.voicedLevel * 0.9 + levelDbfs * 0.1);
      if (this.eagerFired) {
        this.eagerFired = false;
        events.push({ type: 'speech_resumed' });
      }
      this.silentMs = 0;
      this.checkConfirmed(events);
      return events;
    }
    this.silentMs += VAD_FRAME_MS;
    if (o.eagerSilenceMs > 0 && !this.eagerFired && this.confirmed && this.silentMs >= o.eagerSilenceMs && this.voicedMs >= o.minUtteranceSpeechMs) {
      this.eagerFired = true;
      events.push({ type: 'eager_end', silentMs: this.silentMs });
    }
    if (this.silentMs >= o.endSilenceMs) {
      this.inSegment = false;
      const voicedMs = this.voicedMs;
      events.push(voicedMs >= o.minUtteranceSpeechMs && this.confirmed ? { type: 'turn_end', voicedMs, silentMs: this.silentMs } : { type: 'noise_dropped', voicedMs });
    }
    return events;
  }

  reset(): void {
    this.recent = [];
    this.preroll = [];
    this.inSegment = false;
    this.voicedMs = 0;
    this.silentMs = 0;
    this.confirmed = false;
    this.eagerFired = false;
  }

  private checkConfirmed(events: EndpointEvent[]): void {
    if (!this.confirmed && this.voicedMs >= this.options.bargeInMinSpeechMs) {
      this.confirmed = true;
      events.push({ type: 'speech_confirmed' });
    }
  }
}
