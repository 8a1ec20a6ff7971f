import { OnsetWindow } from './speech-onset.ts';
import { UnvoicedOnset } from './unvoiced-onset.ts';
import { VAD_FRAME_MS } from './vad.ts';

/**
 * End-of-turn detection over per-frame VAD decisions. Pure and clock-free: it counts 20 ms
 * frames, so tests drive it frame by frame and the session drives it in real time.
 *
 * turn_end_threshold (0.05 to 0.5, lower waits longer) maps linearly onto the trailing silence
 * that ends a turn: silence_ms = 200 + (0.5 - threshold) * 1200, so 0.05 → 740 ms,
 * 0.45 (the default) → 260 ms, 0.5 → 200 ms.
 *
 * A lexical cue can move that wait (see setCue): once a pause reaches probeSilenceMs the
 * endpointer says so (`pause_probe`), the session recognises the speech so far and sets the cue.
 * Speech that trails off on "and", "um" or "to" waits incompleteSilenceMs (5 × the silence); a
 * complete question waits questionSilenceMs (0.6 ×). While the cue is still being worked out
 * at the usual end, the turn waits for it, at most cueWaitMs more. At recheckSilenceMs the words
 * are asked again (`pause_recheck`): if they changed, the recogniser is still unsure of what it
 * heard (a mis-heard "um" or "the" comes back as one word, then another), and the pause is held
 * as incomplete (setRecheck) unless the revised words make a likely sentence end (below); the
 * turn waits for that answer too. So is a pause whose last word
 * the recogniser itself doubts: its posterior (from the recogniser's word lattice) under
 * minLastWordPosterior. Mis-heard words at a pause ("the" heard as "they", "and" as "then")
 * score low there, and they are what the word rules cannot see through. And so is a pause after
 * words a sentence rarely ends on: the recogniser's language model gives the sentence's end after
 * its last two words a probability under minSentenceEndProbability ("could you tell me they",
 * "chairs tables and then"), which catches what the recogniser mis-hears but is sure of. Words a
 * sentence likely ends on (sureSentenceEndProbability) settle a doubted or revised last word
 * instead: at a true end the recogniser often corrects its last word as the silence grows
 * ("call my sister denied" → "... tonight"), while a revision inside a thinking pause mostly
 * leaves words no sentence ends on ("what time does" → "what time does the").
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
  /** Voiced time after which sound during a reply is a real interruption by length alone. */
  sustainedSpeechMs: number;
  /** Silence after which the speech so far is recognised (the lexical cue, flow's eager reply); 0 disables. */
  probeSilenceMs: number;
  /** Flow mode: silence after which an eager reply may start from the probe's words; 0 disables. */
  eagerSilenceMs: number;
  incompleteSilenceMs: number;
  questionSilenceMs: number;
  /** Longest extra wait for a cue still being recognised at the usual end. */
  cueWaitMs: number;
  /** Silence at which the probe's words are asked again (setRecheck); 0 disables. */
  recheckSilenceMs: number;
  /** A recheck whose last word has a lower posterior than this holds the pause (0 disables). */
  minLastWordPosterior: number;
  /** A recheck whose words end a sentence with a lower probability than this holds the pause (0 disables). */
  minSentenceEndProbability: number;
  /** From this sentence-end probability on, a doubted last word does not hold the pause (above 1: it always does). */
  sureSentenceEndProbability: number;
  /** The lexical cue is on: a probe's words set it (setCue), and the turn waits for them. */
  lexical: boolean;
}

export function endpointerOptions(threshold?: number, eager = false, lexical = true, sustainedSpeechMs = 700): EndpointerOptions {
  const endSilenceMs = silenceMsForThreshold(threshold);
  const eagerSilenceMs = Math.max(PROBE_SILENCE_MS, Math.round(endSilenceMs / 2 / VAD_FRAME_MS) * VAD_FRAME_MS);
  return {
    endSilenceMs,
    startVoicedFrames: 3,
    bargeInMinSpeechMs: 100,
    sustainedSpeechMs,
    minUtteranceSpeechMs: 160,
    prerollMs: 200,
    // Without the cue, flow mode probes where its eager reply starts (half the silence), as before.
    probeSilenceMs: lexical ? PROBE_SILENCE_MS : eager ? eagerSilenceMs : 0,
    eagerSilenceMs: eager ? eagerSilenceMs : 0,
    lexical,
    incompleteSilenceMs: Math.min(MAX_INCOMPLETE_SILENCE_MS, endSilenceMs * 5),
    questionSilenceMs: Math.max(MIN_QUESTION_SILENCE_MS, Math.round((endSilenceMs * 0.6) / VAD_FRAME_MS) * VAD_FRAME_MS),
    cueWaitMs: CUE_WAIT_MS,
    recheckSilenceMs: lexical ? PROBE_SILENCE_MS + RECHECK_AFTER_MS : 0,
    minLastWordPosterior: lexical ? MIN_LAST_WORD_POSTERIOR : 0,
    minSentenceEndProbability: lexical ? MIN_SENTENCE_END_PROBABILITY : 0,
    sureSentenceEndProbability: SURE_SENTENCE_END_PROBABILITY,
  };
}

const PROBE_SILENCE_MS = 100;
const MAX_INCOMPLETE_SILENCE_MS = 2500;
const MIN_QUESTION_SILENCE_MS = 120;
const CUE_WAIT_MS = 500;
/** 60 ms after the probe: measured on the corpus, the partial of a mis-heard pause changes by then. */
const RECHECK_AFTER_MS = 60;
/**
 * Chosen on the corpus's tuning half (bench/results-turn-taking.md): the lowest floor with its
 * fewest false cut-offs once the lattice reads its own segment (lattice-bound.mjs).
 */
const MIN_LAST_WORD_POSTERIOR = 0.2;
/** Chosen on the corpus once revised words that end a sentence stopped holding (bench/results-turn-taking.md, stop 31). */
const MIN_SENTENCE_END_PROBABILITY = 0.12;
/** Chosen on the tuning half likewise: the lowest that held no fewer of its pauses. */
const SURE_SENTENCE_END_PROBABILITY = 0.2;

export interface SpeechMeasure { voicedMs: number; levelDb: number }

/** What the words so far say about the turn (session/voice/lexical-cue.ts decides). */
export type TurnCue = 'incomplete' | 'question' | 'neutral';

export type EndpointEvent =
  /** A first voiced frame outside speech, or hiss (speech-onset.ts): a start or a drop follows. */
  | { type: 'speech_onset' }
  | { type: 'onset_dropped' }
  | { type: 'speech_start'; preroll: Int16Array[] }
  | { type: 'speech_confirmed' }
  | { type: 'speech_sustained' }
  /** silentMs: the silence so far, i.e. how many frames ago the last voiced one was. */
  | { type: 'pause_probe'; silentMs: number }
  | { type: 'pause_recheck'; silentMs: number }
  | { type: 'speech_resumed' }
  /** silentMs: the trailing silence counted, i.e. how many frames ago the last voiced one was. */
  | { type: 'turn_end'; voicedMs: number; silentMs: number }
  | { type: 'noise_dropped'; voicedMs: number };

export class Endpointer {
  private readonly onset = new OnsetWindow();
  private readonly hiss = new UnvoicedOnset();
  private preroll: Int16Array[] = [];
  private inSegment = false;
  private voicedMs = 0;
  private silentMs = 0;
  private confirmed = false;
  private sustained = false;
  private probeFired = false;
  private recheckFired = false;
  private rechecked = false;
  private cue: TurnCue | undefined;
  /** Running loudness of the segment's voiced frames (dBFS), for the tail check. */
  private voicedLevel: number | undefined;
  /** Mean power of the segment's voiced frames (full scale = 1), for its speech level. */
  private voicedPower = 0;
  private voicedFrames = 0;

  constructor(private options: EndpointerOptions) {}

  get active(): boolean {
    return this.inSegment;
  }

  /**
   * The open (or the last) segment: its voiced time, and its speech level, the mean power of its
   * voiced frames in dBFS (−Infinity before a level was given).
   */
  get speech(): SpeechMeasure {
    return { voicedMs: this.voicedMs, levelDb: this.voicedFrames === 0 ? Number.NEGATIVE_INFINITY : 10 * Math.log10(this.voicedPower / this.voicedFrames) };
  }

  reconfigure(options: EndpointerOptions): void {
    this.options = options;
  }

  /** The lexical cue of the probe in flight (ignored once speech has resumed). */
  setCue(cue: TurnCue): void {
    if (this.inSegment && this.probeFired && !this.rechecked) this.cue = cue;
  }

  /**
   * The recheck's answer: words that `changed` since the probe, a last word whose `posterior`
   * (0–1) is under minLastWordPosterior, or words whose `sentenceEnd` probability (0–1) is under
   * minSentenceEndProbability hold the pause as incomplete (undefined: the recogniser has none).
   * Words after which a sentence likely ends (sureSentenceEndProbability) settle a doubted or
   * revised last word: whatever the recogniser heard there, it makes a whole sentence.
   */
  setRecheck(changed: boolean, posterior?: number, sentenceEnd?: number): void {
    if (!this.inSegment || !this.recheckFired || this.rechecked) return;
    this.rechecked = true;
    const likelyEnd = sentenceEnd !== undefined && sentenceEnd >= this.options.sureSentenceEndProbability;
    const doubted = posterior !== undefined && posterior < this.options.minLastWordPosterior && !likelyEnd;
    const unfinished = sentenceEnd !== undefined && sentenceEnd < this.options.minSentenceEndProbability;
    const revised = changed && !likelyEnd;
    if (revised || doubted || unfinished) this.cue = 'incomplete';
  }

  /** Silence needed to end the turn now (after a cue, or the usual end). */
  get requiredSilenceMs(): number {
    const o = this.options;
    if (this.cue === 'incomplete') return o.incompleteSilenceMs;
    if (this.cue === 'question') return o.questionSilenceMs;
    return o.endSilenceMs;
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
      this.preroll.push(frame);
      const maxPreroll = Math.ceil(o.prerollMs / VAD_FRAME_MS) + 4;
      if (this.preroll.length > maxPreroll) this.preroll.shift();
      const step = this.onset.push(speech, o.startVoicedFrames, this.hiss.push(frame));
      if (step === 'onset') events.push({ type: 'speech_onset' });
      else if (step === 'dropped') events.push({ type: 'onset_dropped' });
      if (step === 'start') {
        this.hiss.reset();
        this.inSegment = true;
        this.voicedMs = this.onset.voiced * VAD_FRAME_MS;
        this.silentMs = 0;
        this.confirmed = false;
        this.sustained = false;
        this.probeFired = false;
        this.recheckFired = false;
        this.rechecked = false;
        this.cue = undefined;
        this.voicedLevel = undefined;
        this.voicedPower = 0;
        this.voicedFrames = 0;
        events.push({ type: 'speech_start', preroll: this.preroll });
        this.preroll = [];
        this.checkConfirmed(events);
      }
      return events;
    }
    if (speech) {
      this.voicedMs += VAD_FRAME_MS;
      if (Number.isFinite(levelDbfs)) {
        this.voicedLevel = this.voicedLevel === undefined ? levelDbfs : Math.max(levelDbfs, this.voicedLevel * 0.9 + levelDbfs * 0.1);
        this.voicedPower += 10 ** (levelDbfs / 10);
        this.voicedFrames += 1;
      }
      if (this.probeFired) {
        this.probeFired = false;
        this.recheckFired = false;
        this.rechecked = false;
        this.cue = undefined;
        events.push({ type: 'speech_resumed' });
      }
      this.silentMs = 0;
      this.checkConfirmed(events);
      return events;
    }
    this.silentMs += VAD_FRAME_MS;
    if (o.probeSilenceMs > 0 && !this.probeFired && this.confirmed && this.silentMs >= o.probeSilenceMs && this.voicedMs >= o.minUtteranceSpeechMs) {
      this.probeFired = true;
      events.push({ type: 'pause_probe', silentMs: this.silentMs });
    }
    if (o.recheckSilenceMs > 0 && this.probeFired && !this.recheckFired && this.silentMs >= o.recheckSilenceMs) {
      this.recheckFired = true;
      events.push({ type: 'pause_recheck', silentMs: this.silentMs });
    }
    const cuePending = o.lexical && this.probeFired && (this.cue === undefined || (this.recheckFired && !this.rechecked));
    if (this.silentMs >= this.requiredSilenceMs && (!cuePending || this.silentMs >= o.endSilenceMs + o.cueWaitMs)) {
      this.inSegment = false;
      const voicedMs = this.voicedMs;
      events.push(voicedMs >= o.minUtteranceSpeechMs && this.confirmed ? { type: 'turn_end', voicedMs, silentMs: this.silentMs } : { type: 'noise_dropped', voicedMs });
    }
    return events;
  }

  reset(): void {
    this.onset.reset();
    this.hiss.reset();
    this.preroll = [];
    this.inSegment = false;
    this.voicedMs = 0;
    this.silentMs = 0;
    this.confirmed = false;
    this.sustained = false;
    this.probeFired = false;
    this.recheckFired = false;
    this.rechecked = false;
    this.cue = undefined;
  }

  private checkConfirmed(events: EndpointEvent[]): void {
    if (!this.confirmed && this.voicedMs >= this.options.bargeInMinSpeechMs) {
      this.confirmed = true;
      events.push({ type: 'speech_confirmed' });
    }
    if (!this.sustained && this.voicedMs >= this.options.sustainedSpeechMs) {
      this.sustained = true;
      events.push({ type: 'speech_sustained' });
    }
  }
}
