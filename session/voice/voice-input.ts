import { Endpointer, type EndpointerOptions } from '../../media/endpointer.ts';
import { FrameSplitter } from '../../media/frame-splitter.ts';
import { Pcm16Reader, rmsDbfs } from '../../media/pcm.ts';
import { Resampler } from '../../media/resampler.ts';
import { SilenceMonitor, type SilentMicWarning } from '../../media/silence-monitor.ts';
import { VAD_FRAME_SAMPLES, VAD_SAMPLE_RATE, type VoiceActivityDetector } from '../../media/vad.ts';
import type { SpeechToText, TranscriptionStream } from '../providers/asr.ts';

export interface VoiceInputEvents {
  /** Enough voiced speech to count as the user taking the floor (barge-in). */
  onSpeechConfirmed(): void;
  /** Flow mode: silence long enough to start an eager reply; transcript of the speech so far. */
  onEagerEnd(transcript: Promise<string>): void;
  /** Flow mode: the user went on after an eager end. */
  onSpeechResumed(): void;
  /** The turn ended; resolves with the final transcript. */
  onTurnEnd(transcript: Promise<string>): void;
  onSilentMic(warning: SilentMicWarning): void;
}

/** Longest utterance kept for re-transcription after an eager end (60 s at 16 kHz). */
const MAX_SEGMENT_SAMPLES = VAD_SAMPLE_RATE * 60;

/**
 * The uplink, assembled here in the order audio flows: wire bytes → PCM16 (Pcm16Reader) →
 * silence monitor → 16 kHz (Resampler) → 20 ms frames (FrameSplitter) → VAD → endpointer
 * (onFrame) → the recognition feed: the current utterance is streamed into speech recognition
 * while the user talks, and its transcript ends the turn.
 */
export class VoiceInput {
  private readonly reader = new Pcm16Reader();
  private readonly resampler: Resampler;
  private readonly silence: SilenceMonitor;
  private readonly endpointer: Endpointer;
  private readonly frames: FrameSplitter;
  private asr: TranscriptionStream | undefined;
  /** The open segment's audio, kept so an eager end can be undone and re-transcribed. */
  private segment: Int16Array[] = [];
  private segmentSamples = 0;
  private closed = false;

  constructor(
    inputRate: number,
    endpointing: EndpointerOptions,
    private readonly vad: VoiceActivityDetector,
    private readonly stt: SpeechToText,
    private readonly events: VoiceInputEvents,
  ) {
    this.silence = new SilenceMonitor(inputRate);
    this.resampler = new Resampler(inputRate, VAD_SAMPLE_RATE);
    this.frames = new FrameSplitter(VAD_FRAME_SAMPLES, (frame) => this.onFrame(frame));
    this.endpointer = new Endpointer(endpointing);
  }

  get speaking(): boolean {
    return this.endpointer.active;
  }

  reconfigure(endpointing: EndpointerOptions): void {
    this.endpointer.reconfigure(endpointing);
  }

  /** Raw wire bytes at the session's uplink rate. */
  pushBytes(bytes: Uint8Array): void {
    this.pushSamples(this.reader.read(bytes), true);
  }

  /** PCM at the uplink rate (WebRTC hands decoded samples in directly). */
  pushSamples(samples: Int16Array, monitor = true): void {
    if (this.closed || samples.length === 0) return;
    if (monitor) {
      const warning = this.silence.push(samples);
      if (warning) this.events.onSilentMic(warning);
    }
    this.frames.push(this.resampler.process(samples));
  }

  /** Drops any utterance in progress (reset, interrupt of the whole session). */
  resetTurn(): void {
    this.asr?.abort();
    this.asr = undefined;
    this.segment = [];
    this.segmentSamples = 0;
    this.endpointer.reset();
  }

  close(): void {
    this.closed = true;
    this.resetTurn();
    this.vad.free();
  }

  private onFrame(frame: Int16Array): void {
    const speech = this.vad.isSpeech(frame);
    if (this.endpointer.active) this.keep(frame);
    for (const event of this.endpointer.push(frame, speech, rmsDbfs(frame))) {
      switch (event.type) {
        case 'speech_start':
          this.asr = this.stt.open();
          for (const f of event.preroll) this.keep(f);
          break;
        case 'speech_confirmed':
          this.events.onSpeechConfirmed();
          break;
        case 'eager_end':
          this.events.onEagerEnd(this.finishAsr(false));
          break;
        case 'speech_resumed':
          this.reopenAsr();
          this.events.onSpeechResumed();
          break;
        case 'turn_end':
          this.events.onTurnEnd(this.finishAsr(true));
          break;
        case 'noise_dropped':
          this.asr?.abort();
          this.asr = undefined;
          this.clearSegment();
          break;
      }
    }
  }

  private keep(frame: Int16Array): void {
    this.asr?.write(frame);
    if (this.segmentSamples + frame.length <= MAX_SEGMENT_SAMPLES) {
      this.segment.push(frame);
      this.segmentSamples += frame.length;
    }
  }

  private finishAsr(final: boolean): Promise<string> {
    const stream = this.asr;
    this.asr = undefined;
    if (final) this.clearSegment();
    return stream ? stream.finish() : Promise.resolve('');
  }

  /** After an eager end the recogniser was closed: a new one hears the whole segment again. */
  private reopenAsr(): void {
    this.asr?.abort();
    this.asr = this.stt.open();
    for (const f of this.segment) this.asr.write(f);
  }

  private clearSegment(): void {
    this.segment = [];
    this.segmentSamples = 0;
  }
}
