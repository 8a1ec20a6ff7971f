import { DownlinkPacer, DOWNLINK_FRAME_MS } from '../../media/downlink-pacer.ts';
import { encodePcm, type OutputEncoding } from '../../media/pcm.ts';
import { Resampler } from '../../media/resampler.ts';
import type { TextToSpeech } from '../providers/tts.ts';
import { SentenceSplitter } from './sentences.ts';
import { SpokenTimeline } from './spoken-text.ts';
import type { TurnObservation } from '../turn-observation.ts';

export interface SpeechOutputOptions {
  tts: TextToSpeech;
  outputRate: number;
  encoding: OutputEncoding;
  sendAudio(bytes: Uint8Array): void;
  /** The pacer's lead (see Transport.downlinkLeadMs). */
  leadMs?: number;
  /** Drops audio the transport still holds when the pacer is cleared. */
  discardAudio?(): void;
  /** See Transport.sendAheadMs. */
  sendAheadMs?: number;
  /** See Transport.pacedLate. */
  pacedLate?(ms: number): void;
  /** Holds / releases audio the transport still holds (Transport.pauseAudio). */
  pauseAudio?(): void;
  resumeAudio?(): void;
}

/**
 * The downlink, assembled here in the order audio flows: reply text → sentences
 * (SentenceSplitter) → TTS → the output rate (one Resampler per TTS rate) → 20 ms frames on the
 * clock (DownlinkPacer) → the wire encoding (encodePcm) → the transport. At most one turn speaks;
 * synthesis runs sentence by sentence in order and each sentence's audio is queued as soon as it
 * is ready, so the first audio leaves while the model is still writing.
 */
export class SpeechOutput {
  private readonly pacer: DownlinkPacer;
  private readonly resamplers = new Map<number, Resampler>();
  private current: SpeechTurn | undefined;
  /** Characters handed to synthesis over the session (tts_chars). */
  synthesizedChars = 0;

  constructor(private readonly options: SpeechOutputOptions) {
    this.pacer = new DownlinkPacer({
      sampleRate: options.outputRate,
      ...(options.leadMs === undefined ? {} : { leadMs: options.leadMs }),
      ...(options.pacedLate ? { onLate: options.pacedLate } : {}),
      send: (frame) => {
        this.current?.audioSent();
        options.sendAudio(encodePcm(frame, options.encoding));
      },
    });
  }

  /**
   * Starts speaking a new turn; any turn still speaking is cut off first. `onFailure` hears a
   * synthesis failure (once; the turn speaks nothing more); `observation` gets the turn's speech
   * moments (synthesis asked and answered, the first audio out, the downlink stopped).
   */
  begin(voice: string, onFailure: (error: Error) => void, observation?: TurnObservation): SpeechTurn {
    this.current?.stop();
    this.pacer.sentMs = 0;
    const turn = new SpeechTurn(this, voice, onFailure, observation);
    this.current = turn;
    return turn;
  }

  get pacerSentMs(): number {
    return this.pacer.sentMs;
  }

  /**
   * A possible barge-in: the downlink stops at once, nothing is dropped (the client's buffer
   * drains). False when no turn is speaking. This is the moment a barge-in stops the audio.
   */
  pause(): boolean {
    if (!this.current?.speaking || this.pacer.paused) return false;
    this.pacer.pause();
    this.options.pauseAudio?.();
    this.current.downlinkHeld(true);
    return true;
  }

  /** Not an interruption after all: sends on from the first frame not sent. */
  resume(): void {
    if (!this.pacer.paused) return;
    this.options.resumeAudio?.();
    this.pacer.resume(this.options.sendAheadMs !== undefined);
    this.current?.downlinkHeld(false);
  }

  close(): void {
    this.current?.stop();
    this.pacer.close();
  }

  /** @internal */
  synthesize(text: string, voice: string, signal: AbortSignal): AsyncIterable<{ samples: Int16Array; sampleRate: number }> {
    this.synthesizedChars += text.length;
    return this.options.tts.synthesize(text, voice, signal);
  }

  /**
   * @internal queues PCM at the TTS rate; resolves with its duration in ms. A whole sentence is
   * resampled in 200 ms slices with a turn of the event loop between them: one sentence at a
   * time took ~10 ms, long enough to make every other session's downlink late.
   */
  async queue(samples: Int16Array, sampleRate: number, stopped: () => boolean): Promise<number> {
    let resampler = this.resamplers.get(sampleRate);
    if (!resampler) {
      resampler = new Resampler(sampleRate, this.options.outputRate);
      this.resamplers.set(sampleRate, resampler);
    }
    const slice = Math.round(sampleRate / 5);
    let queuedSamples = 0;
    for (let offset = 0; offset < samples.length; offset += slice) {
      if (offset > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      if (stopped()) break;
      const out = resampler.process(samples.subarray(offset, offset + slice));
      this.pacer.push(out);
      queuedSamples += out.length;
    }
    return (queuedSamples * 1000) / this.options.outputRate;
  }

  /** @internal */
  drain(): Promise<void> {
    this.pacer.flush();
    return this.pacer.whenIdle();
  }

  /**
   * @internal Audio handed to a transport that holds it (Transport.sendAheadMs) and has not left
   * yet, in whole frames: a barge-in now drops it, so it was never sent.
   */
  heldMs(): number {
    if (this.options.sendAheadMs === undefined) return 0;
    const held = this.pacer.aheadMs(performance.now()) - this.options.sendAheadMs;
    return held > 0 ? Math.floor(held / DOWNLINK_FRAME_MS) * DOWNLINK_FRAME_MS : 0;
  }

  /** @internal */
  clear(): number {
    this.options.discardAudio?.();
    return this.pacer.clear();
  }

}

export class SpeechTurn {
  readonly timeline = new SpokenTimeline();
  private readonly splitter = new SentenceSplitter();
  private readonly abort = new AbortController();
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;
  private queuedMs = 0;
  /** Frozen at stop or end: the pacer's counter moves on with the next turn. */
  private finalSentMs: number | undefined;

  constructor(
    private readonly output: SpeechOutput,
    private readonly voice: string,
    private readonly onFailure: (error: Error) => void,
    private readonly observation: TurnObservation | undefined,
  ) {}

  /** @internal the pacer handed a frame of this turn to the transport. */
  audioSent(): void {
    this.observation?.mark('firstAudioOut');
  }

  /**
   * @internal a possible barge-in paused the downlink (the moment its audio stopped), or it
   * resumed: not an interruption after all, so that stop does not count.
   */
  downlinkHeld(held: boolean): void {
    if (held) this.observation?.mark('downlinkStopped');
    else this.observation?.unmark('downlinkStopped');
  }

  pushText(delta: string): void {
    for (const sentence of this.splitter.push(delta)) this.speak(sentence);
  }

  /** The reply's text is complete: resolves once all its audio has been sent. */
  async end(): Promise<void> {
    for (const sentence of this.splitter.flush()) this.speak(sentence);
    await this.chain;
    if (!this.stopped) await this.output.drain();
    this.finalSentMs ??= this.liveSentMs();
  }

  /** Speaks what is buffered and waits until it has been sent, keeping the turn open. */
  async settle(): Promise<void> {
    for (const sentence of this.splitter.flush()) this.speak(sentence);
    await this.chain;
    if (!this.stopped) await this.output.drain();
  }

  /** Stops at once: queued audio is dropped. Returns the audio time actually sent. */
  stop(): number {
    if (!this.stopped) {
      this.stopped = true;
      this.finalSentMs ??= Math.max(0, this.liveSentMs() - this.output.heldMs());
      this.abort.abort();
      this.output.clear();
      this.observation?.mark('downlinkStopped');
    }
    return this.sentMs;
  }

  get speaking(): boolean {
    return !this.stopped && this.finalSentMs === undefined;
  }

  /** Audio of this turn already handed to the transport. */
  get sentMs(): number {
    return this.finalSentMs ?? this.liveSentMs();
  }

  private liveSentMs(): number {
    return Math.min(this.output.pacerSentMs, this.queuedMs + DOWNLINK_FRAME_MS);
  }

  /** The text whose audio was sent (an upper bound of what was heard). */
  get sentText(): string {
    return this.timeline.textAt(this.sentMs);
  }

  private speak(sentence: string): void {
    this.chain = this.chain.then(async () => {
      // A tick later, so the text_delta that completed this sentence leaves before the synthesis
      // request is built (see TurnRunner.start).
      await new Promise<void>((resolve) => process.nextTick(resolve));
      if (this.stopped) return;
      try {
        let first = true;
        this.observation?.mark('ttsRequest');
        for await (const chunk of this.output.synthesize(sentence, this.voice, this.abort.signal)) {
          if (this.stopped) return;
          this.observation?.mark('ttsFirstAudio');
          // On the timeline before it is queued: the pacer starts sending the first slice while
          // later ones are still being resampled, and a barge-in may come in between.
          const ms = (chunk.samples.length * 1000) / chunk.sampleRate;
          this.queuedMs += ms;
          if (first) this.timeline.add(sentence, ms);
          else this.timeline.extendLast(ms);
          await this.output.queue(chunk.samples, chunk.sampleRate, () => this.stopped);
          first = false;
        }
      } catch (error) {
        if (!this.stopped) this.onFailure(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }
}
