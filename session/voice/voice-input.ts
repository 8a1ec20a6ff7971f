import { Endpointer, type EndpointerOptions, type SpeechMeasure, type TurnCue } from '../../media/endpointer.ts';
import { FrameSplitter } from '../../media/frame-splitter.ts';
import { Pcm16Reader, rmsDbfs } from '../../media/pcm.ts';
import { Resampler } from '../../media/resampler.ts';
import { SilenceMonitor, type SilentMicWarning } from '../../media/silence-monitor.ts';
import { VAD_FRAME_SAMPLES, VAD_SAMPLE_RATE, type VadFactory, type VoiceActivityDetector } from '../../media/vad.ts';
import type { SpeechToText, TranscriptionStream } from '../providers/asr.ts';
import { FrameArrivals, type TurnEndTiming } from './frame-arrivals.ts';
import { lexicalCue, words as wordsOf } from './lexical-cue.ts';

export interface VoiceInputEvents {
  /** A first voiced frame: speech may be starting (a reply pauses here). */
  onSoundOnset(): void;
  /** That onset opened no segment. */
  onOnsetDropped(): void;
  /** Sound opened a speech segment. */
  onSpeechStart(): void;
  /** Enough voiced speech to count as real user speech. */
  onSpeechConfirmed(): void;
  /** Voiced speech long enough to be an interruption by length alone. */
  onSpeechSustained(): void;
  /** A pause inside the segment: the transcript of the speech so far (lexical cue, flow's eager reply). */
  onProbe(timing: TurnEndTiming, transcript: Promise<string>): void;
  /** The user went on after a probe. */
  onSpeechResumed(): void;
  /** The segment was noise: no transcript, no turn. */
  onNoise(): void;
  /** The turn ended; `transcribe` (call it at once) resolves with the final transcript. */
  onTurnEnd(timing: TurnEndTiming, transcribe: () => Promise<string>): void;
  onSilentMic(warning: SilentMicWarning): void;
}

/** Longest utterance kept for re-transcription after an eager end (60 s at 16 kHz). */
const MAX_SEGMENT_SAMPLES = VAD_SAMPLE_RATE * 60;

/**
 * The uplink, assembled here in the order audio flows: wire bytes → PCM16 (Pcm16Reader) →
 * silence monitor → 16 kHz (Resampler) → 20 ms frames (FrameSplitter) → VAD → endpointer
 * (onFrame) → the recognition feed: the current utterance is streamed into speech recognition
 * while the user talks, and its transcript ends the turn. The VAD may answer later than it is fed
 * (Silero runs batched); frames reach the endpointer in order once decided.
 */
export class VoiceInput {
  private readonly reader = new Pcm16Reader();
  private readonly resampler: Resampler;
  private readonly silence: SilenceMonitor;
  private readonly endpointer: Endpointer;
  private readonly vad: VoiceActivityDetector;
  private readonly frames: FrameSplitter;
  private asr: TranscriptionStream | undefined;
  /** The open segment's audio, kept so an eager end can be undone and re-transcribed. */
  private segment: Int16Array[] = [];
  private segmentSamples = 0;
  /**
   * A recogniser without partial results was closed at the last pause: its transcript is the
   * segment's if no speech follows.
   */
  private probe: Promise<string> | undefined;
  /** Bumped when speech resumes, so a late probe result never sets the cue of newer speech. */
  private probeEpoch = 0;
  /** The last probe's words, for the recheck a moment later. */
  private probeText: Promise<string> | undefined;
  private readonly arrivals = new FrameArrivals();
  /** When the last speech segment began (the arrival of its first voiced frame). */
  speechOnsetAt: number | undefined;
  private closed = false;

  constructor(
    inputRate: number,
    endpointing: EndpointerOptions,
    vad: VadFactory,
    private readonly stt: SpeechToText,
    private readonly events: VoiceInputEvents,
  ) {
    this.resampler = new Resampler(inputRate, VAD_SAMPLE_RATE);
    this.silence = new SilenceMonitor(inputRate);
    this.endpointer = new Endpointer(endpointing);
    this.vad = vad.create((frame, speech) => this.onFrame(frame, speech));
    this.frames = new FrameSplitter(VAD_FRAME_SAMPLES, (frame) => {
      this.arrivals.arrive(performance.now());
      this.vad.push(frame);
    });
  }

  get speaking(): boolean {
    return this.endpointer.active;
  }

  /** The open or last speech segment's voiced time and level (read it when its event fires). */
  get speech(): SpeechMeasure {
    return this.endpointer.speech;
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
    this.probe = undefined;
    this.probeEpoch += 1;
    this.segment = [];
    this.segmentSamples = 0;
    this.speechOnsetAt = undefined;
    this.endpointer.reset();
  }

  close(): void {
    this.closed = true;
    this.resetTurn();
    this.vad.free();
  }

  private onFrame(frame: Int16Array, speech: boolean): void {
    if (this.closed) return;
    this.arrivals.decide(speech);
    if (this.endpointer.active) this.keep(frame);
    for (const event of this.endpointer.push(frame, speech, rmsDbfs(frame))) {
      switch (event.type) {
        case 'speech_onset':
          this.events.onSoundOnset();
          break;
        case 'onset_dropped':
          this.events.onOnsetDropped();
          break;
        case 'speech_start':
          this.speechOnsetAt = this.arrivals.onset();
          this.asr = this.stt.open();
          for (const f of event.preroll) this.keep(f);
          this.events.onSpeechStart();
          break;
        case 'speech_confirmed':
          this.events.onSpeechConfirmed();
          break;
        case 'speech_sustained':
          this.events.onSpeechSustained();
          break;
        case 'pause_probe':
          this.startProbe(this.arrivals.turnEnd(event.silentMs, performance.now()));
          break;
        case 'pause_recheck':
          this.recheck();
          break;
        case 'speech_resumed':
          this.probe = undefined;
          this.probeEpoch += 1;
          if (!this.asr) this.reopenAsr();
          this.events.onSpeechResumed();
          break;
        case 'turn_end':
          this.events.onTurnEnd(this.arrivals.turnEnd(event.silentMs, performance.now()), () => {
            // A closing probe heard everything up to the pause, and only silence followed: it is final.
            const transcript = this.probe ?? this.finishAsr();
            this.probe = undefined;
            this.clearSegment();
            return transcript;
          });
          break;
        case 'noise_dropped':
          this.asr?.abort();
          this.asr = undefined;
          this.probe = undefined;
          this.clearSegment();
          this.events.onNoise();
          break;
      }
    }
  }

  /**
   * A pause: the words so far set the lexical cue that decides how long this pause may last.
   * A recogniser with partial results (warm pocketsphinx) just says what it has heard and goes
   * on. One without them is closed on the speech so far; if the user goes on, a new one hears the
   * whole segment again (reopenAsr), so the final transcript is whole.
   */
  private startProbe(timing: TurnEndTiming): void {
    const epoch = this.probeEpoch;
    const stream = this.asr;
    let words: Promise<string>;
    if (stream?.partial) {
      words = stream.partial();
    } else {
      words = this.finishAsr();
      this.probe = words;
    }
    this.probeText = words;
    // A failed probe settles the cue as neutral: the turn ends on the usual silence.
    words.then(
      (text) => this.cue(epoch, lexicalCue(text)),
      () => this.cue(epoch, 'neutral'),
    );
    this.events.onProbe(timing, words);
  }

  /**
   * The words asked again a moment into the pause, with the recogniser's posterior of the last
   * one and its language model's probability that the sentence ends there: if they changed, or
   * it doubts that word, it is unsure of what it heard; if a sentence rarely ends on them, the
   * thought is not finished. Either holds the pause (Endpointer.setRecheck). Without partial
   * results, or if any of the answers fails, nothing changes.
   */
  private recheck(): void {
    const epoch = this.probeEpoch;
    const stream = this.asr;
    const first = this.probeText;
    if (!stream?.partial || !first) {
      this.endpointer.setRecheck(false);
      return;
    }
    Promise.all([first, stream.partial(), stream.lastWordPosterior?.(), stream.sentenceEndProbability?.()]).then(
      ([a, b, posterior, sentenceEnd]) => this.rechecked(epoch, wordsOf(a).join(' ') !== wordsOf(b).join(' '), posterior, sentenceEnd),
      () => this.rechecked(epoch, false),
    );
  }

  private rechecked(epoch: number, changed: boolean, posterior?: number, sentenceEnd?: number): void {
    if (epoch === this.probeEpoch && !this.closed) this.endpointer.setRecheck(changed, posterior, sentenceEnd);
  }

  private cue(epoch: number, cue: TurnCue): void {
    if (epoch === this.probeEpoch && !this.closed) this.endpointer.setCue(cue);
  }

  private keep(frame: Int16Array): void {
    this.asr?.write(frame);
    if (this.segmentSamples + frame.length <= MAX_SEGMENT_SAMPLES) {
      this.segment.push(frame);
      this.segmentSamples += frame.length;
    }
  }

  private finishAsr(): Promise<string> {
    const stream = this.asr;
    this.asr = undefined;
    return stream ? stream.finish() : Promise.resolve('');
  }

  /** After a probe the recogniser was closed: a new one hears the whole segment again. */
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
