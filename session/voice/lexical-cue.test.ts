import { describe, expect, it } from 'vitest';
import { DEFAULT_BARGE_IN } from './barge-in.ts';
import { lexicalCue, nonBackchannelWords, wordsInterrupt } from './lexical-cue.ts';

const { backchannels, interruptionWords } = DEFAULT_BARGE_IN;

describe('lexical cues', () => {
  it.each([
    ['i would like to book a table for two and', 'incomplete'],
    ['so um', 'incomplete'],
    ['i want to go to', 'incomplete'],
    ['send it to my', 'incomplete'],
    // "um" heard as "i'm": a contracted auxiliary never ends a sentence.
    ['the meeting is on tuesday i\'m', 'incomplete'],
    ['that\'s', 'incomplete'],
    ['please add milk eggs on', 'incomplete'],
    ['what are you working on', 'neutral'],
    ['what is twelve times seven', 'question'],
    ['can you book it', 'question'],
    ['where are you from', 'neutral'],
    ['my name is robert', 'neutral'],
    ['thank you', 'neutral'],
    ['', 'neutral'],
  ])('"%s" → %s', (text, cue) => {
    expect(lexicalCue(text)).toBe(cue);
  });

  it('tells backchannels from words that take the floor', () => {
    expect(nonBackchannelWords('yeah okay mm-hm', backchannels)).toEqual([]);
    expect(nonBackchannelWords('i see', backchannels)).toEqual([]);
    expect(wordsInterrupt('uh-huh right', backchannels, interruptionWords)).toBe(false);
    // One stray word is what the recogniser makes of a cough or a hum: not enough.
    expect(wordsInterrupt('huh', backchannels, interruptionWords)).toBe(false);
    expect(wordsInterrupt('stop', backchannels, interruptionWords)).toBe(true);
    expect(wordsInterrupt('yeah but tuesday', backchannels, interruptionWords)).toBe(true);
    expect(wordsInterrupt('my name is robert', backchannels, interruptionWords)).toBe(true);
  });
});
