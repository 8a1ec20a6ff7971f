import { describe, expect, it } from 'vitest';
import { wordErrorRate, wordErrors, words } from './wer.ts';

describe('word error rate', () => {
  it('normalises case and punctuation, keeps apostrophes', () => {
    expect(words("Hello! It's eight o'clock, Ada.")).toEqual(['hello', "it's", 'eight', "o'clock", 'ada']);
  });

  it('counts substitutions, deletions and insertions', () => {
    expect(wordErrors('what is twelve times seven', 'what is twelve times seven')).toEqual({ errors: 0, words: 5 });
    expect(wordErrors('what is twelve times seven', 'what is twelve time seven')).toEqual({ errors: 1, words: 5 });
    expect(wordErrors('what is twelve times seven', 'what twelve times seven')).toEqual({ errors: 1, words: 5 });
    expect(wordErrors('my name is robert', 'mine they aim is raw bird')).toEqual({ errors: 5, words: 4 });
    expect(wordErrors('hello', '')).toEqual({ errors: 1, words: 1 });
  });

  it('weighs a set by its words, in percent', () => {
    expect(wordErrorRate([{ reference: 'a b c d', hypothesis: 'a b c d' }, { reference: 'e f', hypothesis: 'e x' }])).toBeCloseTo(100 / 6);
  });
});
