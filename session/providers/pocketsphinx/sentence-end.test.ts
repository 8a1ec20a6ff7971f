import { describe, expect, it } from 'vitest';
import { Decoder } from './decoder.mjs';

/**
 * The language model's sentence-end probability on Debian's real pocketsphinx model (en-us.lm.bin,
 * the decoder's own): the recogniser's words at thinking pauses of the turn-taking corpus score
 * low, whole sentences score high.
 */
describe("sentence-end probability (the recogniser's language model)", () => {
  const decoder = new Decoder();
  const p = (text: string): number => {
    const value = decoder.sentenceEnd(text);
    if (value === undefined) throw new Error(`no probability for "${text}"`);
    return value;
  };

  it('is low after words a sentence rarely ends on, even ones no word rule lists, and high after whole sentences', () => {
    // Mis-heard at thinking pauses, and the recogniser fairly sure of the last word (bench/results-turn-taking.md).
    for (const unfinished of ['could you tell me they', 'we need chairs tables and then', "du monde also don't really like the golf", 'i would like to order a large']) expect(p(unfinished)).toBeLessThan(0.1);
    for (const finished of ['thank you', 'my appointment is on friday', 'what is the weather like in paris today', 'yes']) expect(p(finished)).toBeGreaterThan(0.1);
    expect(p('could you tell me they')).toBeLessThan(p('could you tell me'));
  });

  it('looks at the last two words only, with the sentence start standing in for a missing one', () => {
    expect(p('i would like to order a large')).toBeCloseTo(p('order a large'), 10);
    expect(p('yes')).not.toBeCloseTo(p('well yes'), 5);
    // "the" alone and after a word: a sentence never ends on it.
    expect(p('the')).toBeLessThan(0.01);
  });

  it('ignores fillers, noise marks and alternate pronunciations; no words, no probability', () => {
    expect(p('<sil> thank you [noise] <sil>')).toBeCloseTo(p('thank you'), 10);
    expect(p('thank you(2)')).toBeCloseTo(p('thank you'), 10);
    expect(p('Thank You')).toBeCloseTo(p('thank you'), 10);
    expect(decoder.sentenceEnd('')).toBeUndefined();
    expect(decoder.sentenceEnd('<sil> [noise]')).toBeUndefined();
  });

  it('scores the words heard so far by default, and nothing outside an utterance', () => {
    expect(decoder.sentenceEnd()).toBeUndefined();
    decoder.start();
    expect(decoder.sentenceEnd()).toBeUndefined();
    decoder.end();
  });
});
