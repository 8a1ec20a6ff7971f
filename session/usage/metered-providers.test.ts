import { describe, expect, it } from 'vitest';
import type { SpeechToText, TranscriptionStream } from '../providers/asr.ts';
import { meteredSpeechToText } from './metered-providers.ts';

/** The metered recogniser counts what is written and changes nothing else a session relies on. */
describe('meteredSpeechToText', () => {
  const recogniser = (partials: boolean): SpeechToText => ({
    name: 'fake',
    ...(partials ? { partials: true } : {}),
    open: (): TranscriptionStream => ({
      write: () => undefined,
      finish: async () => 'two and a window seat',
      abort: () => undefined,
      partial: async () => 'two and',
    }),
  });

  it('passes partials and each stream\'s partial() through (the lexical end-of-turn cue depends on them), and counts the samples written', async () => {
    const counted: number[] = [];
    const metered = meteredSpeechToText(recogniser(true), { asr: (samples) => counted.push(samples) });
    expect(metered.partials).toBe(true);
    const stream = metered.open();
    stream.write(new Int16Array(160));
    stream.write(new Int16Array(320));
    expect(await stream.partial?.()).toBe('two and');
    expect(await stream.finish()).toBe('two and a window seat');
    expect(counted).toEqual([160, 320]);
  });

  it('a recogniser without partial results stays without them', () => {
    expect(meteredSpeechToText(recogniser(false), { asr: () => undefined }).partials).toBeUndefined();
  });
});
