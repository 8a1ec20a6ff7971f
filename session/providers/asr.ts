/**
 * The SpeechToText port. A recogniser receives an utterance's 16 kHz PCM as it is spoken (so a
 * streaming backend can work ahead) and returns the final transcript when the turn ends.
 */
export interface TranscriptionStream {
  write(samples: Int16Array): void;
  /** The turn ended: resolves with the final transcript ('' when nothing was recognised). */
  finish(): Promise<string>;
  /** The segment was noise or the session ended: release everything, no transcript. */
  abort(): void;
  /**
   * The best transcript of the utterance so far, for recognisers that stream (pocketsphinx);
   * absent where only the final one exists. Resolves '' once the stream has ended.
   */
  partial?(): Promise<string>;
  /**
   * The recogniser's posterior probability (0–1) of the last word it has heard so far, from its
   * word lattice (pocketsphinx); undefined before a word or once the stream has ended.
   */
  lastWordPosterior?(): Promise<number | undefined>;
  /**
   * How likely the sentence ends after the words so far (0–1), by the recogniser's own language
   * model (pocketsphinx: P(</s> | the last two words)); undefined before a word or once ended.
   */
  sentenceEndProbability?(): Promise<number | undefined>;
}

export interface SpeechToText {
  readonly name: string;
  /** Its streams answer partial(): the lexical end-of-turn cue is on only then (no second decode). */
  readonly partials?: boolean;
  /** Opens a stream for one utterance of 16 kHz mono PCM16. */
  open(): TranscriptionStream;
  close?(): Promise<void>;
}

/** A missing local dependency: voice sessions are refused with this message at start. */
export class SpeechUnavailableError extends Error {
  override name = 'SpeechUnavailableError';
}
