/** Types of decoder.mjs (plain JavaScript so the recogniser threads need no TypeScript loader). */
export declare const MODEL_DIR: string;

export declare class Decoder {
  start(): void;
  process(samples: Int16Array): void;
  partial(): string;
  lastWord(): { word: string; posterior: number } | undefined;
  /** How likely a sentence ends after `text` (default: the words so far), by the language model (0–1). */
  sentenceEnd(text?: string): number | undefined;
  end(): string;
}
