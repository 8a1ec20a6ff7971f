import type { VoiceCatalog } from './voices.ts';

export interface SpeechChunk {
  samples: Int16Array;
  sampleRate: number;
}

/** The TextToSpeech port: PCM for a text in a voice, streamed, cancellable. */
export interface TextToSpeech {
  readonly name: string;
  readonly voices: VoiceCatalog;
  synthesize(text: string, voice: string, signal: AbortSignal): AsyncIterable<SpeechChunk>;
  close?(): Promise<void>;
}

export class SpeechProviderError extends Error {
  constructor(
    message: string,
    readonly retryable = true,
  ) {
    super(message);
    this.name = 'SpeechProviderError';
  }
}
