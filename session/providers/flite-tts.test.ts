import { describe, expect, it } from 'vitest';
import { FliteTextToSpeech } from './flite-tts.ts';
import { SpeechProviderError, type SpeechChunk } from './tts.ts';

async function speak(tts: FliteTextToSpeech, text: string): Promise<SpeechChunk[]> {
  const chunks: SpeechChunk[] = [];
  for await (const chunk of tts.synthesize(text, 'slt', new AbortController().signal)) chunks.push(chunk);
  return chunks;
}

describe('FliteTextToSpeech', () => {
  it('synthesises a sentence', async () => {
    const tts = new FliteTextToSpeech(1);
    try {
      const [chunk] = await speak(tts, 'Hello there.');
      expect(chunk!.samples.length).toBeGreaterThan(1000);
    } finally {
      await tts.close();
    }
  });

  it('a helper that does not answer in time is killed; after the retry stalls too, the sentence fails as a speech error', async () => {
    // 1 ms: no helper answers that fast, so both attempts time out.
    const tts = new FliteTextToSpeech(1, 1);
    try {
      const error = await speak(tts, 'Hello there.').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SpeechProviderError);
      expect((error as SpeechProviderError).publicDetail).toBe('speech synthesis failed');
    } finally {
      await tts.close();
    }
  });
});
