import { concat } from '../../media/testing/audio-stream.ts';
import type { SpeechToText, TranscriptionStream } from '../providers/asr.ts';
import { SpeechProviderError, type SpeechChunk, type TextToSpeech } from '../providers/tts.ts';
import { catalogOf, FLITE_VOICES, type VoiceCatalog } from '../providers/voices.ts';

/**
 * Fake speech providers for unit tests, in the shapes of the SpeechToText and TextToSpeech
 * ports. Recognition maps the utterance's audio to a scripted text (clipTranscriber finds known
 * clips in it); synthesis makes deterministic audio whose length follows the text, so what was
 * "heard" of an interrupted reply can be computed exactly.
 */

export class FakeSpeechToText implements SpeechToText {
  readonly name = 'fake-stt';
  /** Each utterance's audio as the recogniser received it. */
  readonly heard: Int16Array[] = [];

  /** With `partials`, streams answer partial() as a streaming recogniser (pocketsphinx) does. */
  readonly partials: boolean;

  private readonly posterior: ((audio: Int16Array) => number | undefined) | undefined;
  private readonly sentenceEnd: ((audio: Int16Array) => number | undefined) | undefined;

  /**
   * `posterior`: the last word's posterior for the audio so far (streams then answer
   * lastWordPosterior()); `sentenceEnd`: the probability a sentence ends there (sentenceEndProbability()).
   */
  constructor(
    private readonly transcribe: (audio: Int16Array) => string,
    options: { partials?: boolean; posterior?: (audio: Int16Array) => number | undefined; sentenceEnd?: (audio: Int16Array) => number | undefined } = {},
  ) {
    this.partials = options.partials ?? false;
    this.posterior = options.posterior;
    this.sentenceEnd = options.sentenceEnd;
  }

  open(): TranscriptionStream {
    const parts: Int16Array[] = [];
    let open = true;
    const partial = async (): Promise<string> => (open ? this.transcribe(concat(...parts)) : '');
    const posterior = this.posterior;
    const lastWordPosterior = async (): Promise<number | undefined> => (open && posterior ? posterior(concat(...parts)) : undefined);
    const sentenceEnd = this.sentenceEnd;
    const sentenceEndProbability = async (): Promise<number | undefined> => (open && sentenceEnd ? sentenceEnd(concat(...parts)) : undefined);
    return {
      ...(this.partials ? { partial } : {}),
      ...(this.partials && posterior ? { lastWordPosterior } : {}),
      ...(this.partials && sentenceEnd ? { sentenceEndProbability } : {}),
      write: (samples) => {
        if (open) parts.push(samples.slice());
      },
      finish: async () => {
        open = false;
        const audio = concat(...parts);
        this.heard.push(audio);
        return this.transcribe(audio);
      },
      abort: () => {
        open = false;
      },
    };
  }
}

/**
 * A transcriber that recognises the given clips (16 kHz, as the recogniser receives them) by
 * their exact samples, in the order they occur in the utterance: the "words" of a fixture clip
 * are its text. Audio with no known clip in it transcribes to ''.
 */
export function clipTranscriber(clips: Record<string, Int16Array>): (audio: Int16Array) => string {
  const probes = Object.entries(clips).map(([text, clip]) => ({ text, probe: loudestWindow(clip, 160) }));
  return (audio) =>
    probes
      .map(({ text, probe }) => ({ text, at: indexOf(audio, probe) }))
      .filter((found) => found.at >= 0)
      .sort((a, b) => a.at - b.at)
      .map((found) => found.text)
      .join(' ');
}

export interface FakeTtsOptions {
  /** Output rate of the synthesised audio (default 16000). */
  sampleRate?: number;
  /** Audio per character of text (default 60 ms: about the pace of flite). */
  msPerChar?: number;
  voices?: VoiceCatalog;
}

export class FakeTextToSpeech implements TextToSpeech {
  readonly name = 'fake-tts';
  readonly voices: VoiceCatalog;
  /** Every text synthesised, in order. */
  readonly spoken: string[] = [];
  private readonly sampleRate: number;
  private readonly msPerChar: number;

  constructor(options: FakeTtsOptions = {}) {
    this.voices = options.voices ?? catalogOf(FLITE_VOICES);
    this.sampleRate = options.sampleRate ?? 16000;
    this.msPerChar = options.msPerChar ?? 60;
  }

  async *synthesize(text: string, voice: string, signal: AbortSignal): AsyncIterable<SpeechChunk> {
    const clean = text.replace(/\s+/g, ' ').trim();
    if (!clean || signal.aborted) return;
    if (!this.voices.find(voice)) throw new SpeechProviderError(`unknown voice ${voice}`, false);
    this.spoken.push(clean);
    const samples = new Int16Array(Math.round((clean.length * this.msPerChar * this.sampleRate) / 1000));
    // A quiet tone: audible in a recording, deterministic.
    for (let i = 0; i < samples.length; i += 1) samples[i] = Math.round(2000 * Math.sin((2 * Math.PI * 220 * i) / this.sampleRate));
    yield { samples, sampleRate: this.sampleRate };
  }
}

/** The `size` samples of the clip with the most energy: unlikely to repeat elsewhere. */
function loudestWindow(clip: Int16Array, size: number): Int16Array {
  let best = 0;
  let bestEnergy = -1;
  for (let start = 0; start + size <= clip.length; start += size) {
    let energy = 0;
    for (let i = start; i < start + size; i += 1) energy += clip[i]! * clip[i]!;
    if (energy > bestEnergy) {
      bestEnergy = energy;
      best = start;
    }
  }
  return clip.subarray(best, best + size);
}

function indexOf(haystack: Int16Array, needle: Int16Array): number {
  const first = needle[0];
  outer: for (let i = 0; i + needle.length <= haystack.length; i += 1) {
    if (haystack[i] !== first) continue;
    for (let j = 1; j < needle.length; j += 1) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
