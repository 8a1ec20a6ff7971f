import type { SpeechToText, TranscriptionStream } from '../../session/providers/asr.ts';
import type { SpeechChunk, TextToSpeech } from '../../session/providers/tts.ts';
import { catalogOf, FLITE_VOICES, type VoiceCatalog } from '../../session/providers/voices.ts';

/**
 * Instant model providers for the voice benchmarks: they cost (almost) nothing and answer at
 * once, so what is measured is the server's own pipeline (VAD, endpointer, resampling, pacing,
 * framing, Opus and SRTP on WebRTC), not a model.
 */

/** Rate of the fake speech, as flite's voices (so the downlink resamples exactly as with flite). */
export const FAKE_TTS_RATE = 16000;
/** Audio per character of text: about the pace of real speech (≈ 14 characters a second). */
export const FAKE_TTS_MS_PER_CHAR = 70;

/**
 * A 220 Hz tone, synthesised once per length and cached, returned in one chunk without awaiting
 * anything: the first audio of a sentence is ready in the same tick the sentence is.
 */
export class FakeTextToSpeech implements TextToSpeech {
  readonly name = 'fake-tone';
  readonly voices: VoiceCatalog = catalogOf(FLITE_VOICES);
  private readonly cache = new Map<number, Int16Array>();

  constructor(
    private readonly msPerChar = FAKE_TTS_MS_PER_CHAR,
    private readonly rate = FAKE_TTS_RATE,
  ) {}

  async *synthesize(text: string, _voice: string, signal: AbortSignal): AsyncIterable<SpeechChunk> {
    if (signal.aborted) return;
    const ms = Math.min(20000, Math.max(100, text.length * this.msPerChar));
    yield { samples: this.tone(ms), sampleRate: this.rate };
  }

  private tone(ms: number): Int16Array {
    let samples = this.cache.get(ms);
    if (!samples) {
      samples = new Int16Array(Math.round((this.rate * ms) / 1000));
      for (let i = 0; i < samples.length; i += 1) samples[i] = Math.round(6000 * Math.sin((2 * Math.PI * 220 * i) / this.rate));
      this.cache.set(ms, samples);
    }
    // The pacer copies frames out of it; handing the cached array out is safe.
    return samples;
  }
}

/** Returns the same transcript for every utterance, as soon as the turn ends; audio is discarded. */
export class FakeSpeechToText implements SpeechToText {
  readonly name = 'fake-fixed';

  constructor(private readonly transcript: string) {}

  open(): TranscriptionStream {
    const transcript = this.transcript;
    return {
      write: () => undefined,
      finish: () => Promise.resolve(transcript),
      abort: () => undefined,
    };
  }
}
