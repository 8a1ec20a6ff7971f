/** Types of decoder.mjs (plain JavaScript so the recogniser threads need no TypeScript loader). */
export declare const MODEL_DIR: string;

/** The search settings the server decodes with (pocketsphinx command-line pairs). */
export declare const SEARCH_SETTINGS: readonly string[];

export declare class Decoder {
  /** `settings` replace SEARCH_SETTINGS (benchmarks compare settings side by side). */
  constructor(settings?: readonly string[]);
  start(): void;
  process(samples: Int16Array): void;
  partial(): string;
  lastWord(): { word: string; posterior: number } | undefined;
  /** How likely a sentence ends after `text` (default: the words so far), by the language model (0–1). */
  sentenceEnd(text?: string): number | undefined;
  end(): string;
  /** Frees the models; the decoder is unusable after. */
  free(): void;
}
