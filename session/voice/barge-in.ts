import type { SpeechMeasure } from '../../media/endpointer.ts';
import { nonBackchannelWords, wordsInterrupt } from './lexical-cue.ts';

/** How sound during the assistant's speech is told apart from a real interruption. */
export interface BargeInPolicy {
  /**
   * `speech`: voiced speech of sustainedSpeechMs confirms; `words`: recognised words that are
   * not all backchannels confirm; `speech_or_words`: either; `immediate`: 100 ms of speech stops
   * the reply at once (no pause, no resume).
   */
  confirm: 'speech' | 'words' | 'speech_or_words' | 'immediate';
  sustainedSpeechMs: number;
  /**
   * A pause nothing confirmed within this time resumes the reply. The default leaves 100 ms of
   * the 1.5 s a user should wait at most for the pause's own detection and the pacing, which
   * the client's silence also spans.
   */
  maxPauseMs: number;
  backchannels: readonly string[];
  /** Single words that take the floor on their own ("stop"); other lone words need company. */
  interruptionWords: readonly string[];
  /**
   * Words from speech shorter than this (voiced time) take the floor only when there are three
   * or more that are not backchannels, or an interruption word among them: "yeah" or "i see"
   * last a syllable or two, and the recogniser often hears them as two other words ("you have",
   * "by safe"), while a short real interruption ("wait stop" heard as "like at all") has more
   * syllables. 0 disables.
   */
  shortSpeechMs: number;
  /**
   * Sound more than this many dB below the user's own speech level cannot confirm an
   * interruption (voices in the room, a television: quieter than the user at the mic); 0 disables.
   */
  levelGateDb: number;
}

/**
 * The user's speech level before their first turn: ITU-T P.56's nominal active speech level,
 * −26 dBov; afterwards a running mean of their turns' levels.
 */
export const DEFAULT_USER_LEVEL_DB = -26;
const USER_LEVEL_WEIGHT = 0.3;
/** Words (not backchannels) that make short speech an interruption: more than a backchannel's syllables. */
const SHORT_SPEECH_MIN_WORDS = 3;

export const DEFAULT_BARGE_IN: BargeInPolicy = {
  confirm: 'speech_or_words',
  sustainedSpeechMs: 700,
  maxPauseMs: 1400,
  backchannels: ['mm-hm', 'mhm', 'mm', 'hm', 'hmm', 'uh-huh', 'um-hum', 'uh', 'um', 'yeah', 'yes', 'yep', 'right', 'okay', 'ok', 'sure', 'i see', 'got it', 'alright', 'all right'],
  interruptionWords: ['stop', 'wait', 'hold', 'pause', 'hang', 'sorry', 'excuse', 'actually'],
  shortSpeechMs: 600,
  levelGateDb: 6,
};

export interface BargeInHost {
  /** Pauses the reply's audio if one is playing; false when there is nothing to pause. */
  pauseReply(): boolean;
  /** Sends the paused reply on from where it stopped. */
  resumeReply(): void;
  /** A real interruption: interrupted, truncation, the reply ends. */
  interruptReply(): void;
  readonly replying: boolean;
  log: { info(obj: object, msg: string): void };
}

export type BargeOutcome = 'interrupted' | 'resumed' | 'none';

/**
 * The false-interruption recovery state machine. Sound that opens a speech segment during the
 * reply pauses the downlink at once (the client's buffer drains; nothing is cleared). The pause
 * ends one of two ways: confirmed (sustained speech, or words that are not backchannels) → the
 * reply is interrupted exactly as a barge-in always was; or not (a cough, a click, "mm-hm" heard
 * at the first pause in the sound or in the final transcript, a pause nobody confirmed within
 * maxPauseMs) → the reply resumes from the paused point.
 */
export class BargeIn {
  private paused: { at: number; timer: NodeJS.Timeout } | undefined;
  /** How the last segment that began during a reply was settled (the controller reads it at turn end). */
  private segment: BargeOutcome = 'none';
  /** The user's speech level (dBFS), for the level gate. */
  private userLevelDb = DEFAULT_USER_LEVEL_DB;
  /** The open segment's pause was ended by a probe's words, not by its final transcript. */
  private resumedAtPause = false;
  /** The open segment paused the reply a second time (at most once: sounds would stutter it). */
  private pausedAgain = false;
  /** When a possible onset paused the reply; a start holds that pause, a drop ends it. */
  private onsetPausedAt: number | undefined;

  constructor(
    private readonly host: BargeInHost,
    private readonly policy: BargeInPolicy,
  ) {}

  get pending(): boolean {
    return this.paused !== undefined;
  }

  /** A first voiced frame: the reply pauses now, not two frames later at the segment's start. */
  onSoundOnset(): void {
    if (this.policy.confirm === 'immediate' || !this.host.replying || this.paused) return;
    if (this.host.pauseReply()) this.onsetPausedAt = performance.now();
  }

  /** The onset opened no segment: the pause was shorter than the listener's buffer. */
  onOnsetDropped(): void {
    if (this.onsetPausedAt === undefined) return;
    this.onsetPausedAt = undefined;
    if (!this.paused) this.host.resumeReply();
  }

  /** A speech segment opened. */
  onSpeechStart(): void {
    this.segment = 'none';
    this.resumedAtPause = false;
    this.pausedAgain = false;
    if (this.policy.confirm === 'immediate' || !this.host.replying) return;
    // A pause an earlier segment still holds (its words not yet in) is this segment's now.
    if (this.host.pauseReply() || this.paused || this.onsetPausedAt !== undefined) this.hold();
  }

  /** 100 ms of voiced speech: the old barge-in point, still used in `immediate` mode. */
  onSpeechConfirmed(): void {
    if (this.policy.confirm === 'immediate' && this.host.replying) {
      this.segment = 'interrupted';
      this.host.interruptReply();
    }
  }

  onSpeechSustained(speech: SpeechMeasure): void {
    if (this.paused && this.policy.confirm !== 'words' && this.loudEnough(speech)) this.confirm('sustained speech');
  }

  /** A user turn was taken: its level updates the user's speech level. */
  onUserTurn(speech: SpeechMeasure): void {
    if (Number.isFinite(speech.levelDb)) this.userLevelDb += USER_LEVEL_WEIGHT * (speech.levelDb - this.userLevelDb);
  }

  /**
   * Words recognised for the open segment (a mid-segment probe or the final transcript), with
   * its voiced time and level so far. Returns whether they may become a user turn: not when the
   * segment was settled as a false interruption.
   */
  onWords(text: string, final: boolean, speech: SpeechMeasure): boolean {
    const interrupting = this.policy.confirm !== 'speech' && this.loudEnough(speech) && this.wordsInterrupt(text, speech);
    if (this.paused) {
      if (interrupting) {
        this.confirm('words');
        return true;
      }
      const onlyBackchannels = nonBackchannelWords(text, this.policy.backchannels).length === 0;
      // At a pause in the sound (a probe), only backchannels or no words resume the reply, at
      // once instead of after the turn's end-of-turn wait (for a lone "yeah" often the long
      // hold); a stray word there may begin a real interruption ("no, …"), so it waits for the
      // rest. Should the user go on after a resume, the reply pauses again (onSpeechResumed).
      if (!final && !onlyBackchannels) return true;
      this.resume(onlyBackchannels ? `backchannel or no words${final ? '' : ' at a pause'}` : 'too few words');
      this.resumedAtPause = !final;
      return false;
    }
    // Resumed earlier (noise so far, or the pause timed out): real words still take the floor.
    if (this.segment === 'resumed') return interrupting;
    return true;
  }

  /**
   * Speech again after a probe's pause: a reply resumed at that pause waits once more, once per
   * segment. A reply that ended meanwhile has nothing to pause; the segment stays settled, so
   * its backchannel still takes no turn.
   */
  onSpeechResumed(): void {
    if (!this.resumedAtPause || this.pausedAgain || this.paused) return;
    this.resumedAtPause = false;
    this.pausedAgain = true;
    if (!this.host.replying || !this.host.pauseReply()) return;
    this.segment = 'none';
    this.hold();
  }

  /** The segment was noise (too little voiced time). */
  onNoise(): void {
    if (this.paused) this.resume('noise');
  }

  /** The reply ended or was replaced while paused: nothing left to resume. */
  forget(): void {
    this.onsetPausedAt = undefined;
    if (!this.paused) return;
    clearTimeout(this.paused.timer);
    this.paused = undefined;
  }

  private wordsInterrupt(text: string, speech: SpeechMeasure): boolean {
    const { backchannels, interruptionWords, shortSpeechMs } = this.policy;
    if (speech.voicedMs < shortSpeechMs) {
      const rest = nonBackchannelWords(text, backchannels);
      return rest.length >= SHORT_SPEECH_MIN_WORDS || rest.some((w) => interruptionWords.includes(w));
    }
    return wordsInterrupt(text, backchannels, interruptionWords);
  }

  private loudEnough(speech: SpeechMeasure): boolean {
    const gate = this.policy.levelGateDb;
    return gate === 0 || !Number.isFinite(speech.levelDb) || speech.levelDb >= this.userLevelDb - gate;
  }

  /**
   * Holds the paused reply until the sound is judged or maxPauseMs passes. Words that come after
   * the resume still take the floor (onWords): the reply is then cut at what was sent by that
   * time, so the heard text stays exact.
   */
  private hold(): void {
    if (this.paused) clearTimeout(this.paused.timer);
    const now = performance.now();
    // A new segment gets a whole maxPauseMs; a pause its own onset began counts from then.
    const from = this.paused ? now : (this.onsetPausedAt ?? now);
    this.onsetPausedAt = undefined;
    const pause = { at: this.paused?.at ?? from, timer: setTimeout(() => this.paused === pause && this.resume('no confirmation in time'), this.policy.maxPauseMs - (now - from)) };
    this.paused = pause;
  }

  private confirm(reason: string): void {
    this.forget();
    this.segment = 'interrupted';
    this.host.log.info({ reason }, 'barge-in confirmed');
    this.host.interruptReply();
  }

  private resume(reason: string): void {
    const paused = this.paused;
    if (!paused) return;
    this.forget();
    this.segment = 'resumed';
    this.host.log.info({ reason, paused_ms: Math.round(performance.now() - paused.at) }, 'false interruption: reply resumed');
    this.host.resumeReply();
  }
}
