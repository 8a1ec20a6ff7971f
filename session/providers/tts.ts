import { ProviderError } from './provider-error.ts';
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

/** A recogniser or synthesiser failed; `publicDetail` is what the client reads. */
export class SpeechProviderError extends ProviderError {
  override name = 'SpeechProviderError';
}
