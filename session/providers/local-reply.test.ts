import { describe, expect, it } from 'vitest';
import type { ChatMessage } from './llm.ts';
import { composeLocalReply } from './local-reply.ts';

/**
 * The offline assistant's intents, one by one. The socket tests that used to reach some of
 * them (a name said after a barge-in, a long spoken sentence) now run on the fake model.
 */

const user = (content: string): ChatMessage => ({ role: 'user', content });
const reply = (...texts: string[]): string => composeLocalReply(texts.map(user), new Date('2026-03-04T05:06:07Z'));

describe('composeLocalReply', () => {
  it('remembers a name said earlier, and says when none was', () => {
    expect(reply('my name is robert')).toBe('Nice to meet you, robert. I will remember that.');
    expect(reply('hi, my name is Ada Lovelace.', 'what is my name?')).toBe('Your name is Ada Lovelace.');
    expect(reply("what's my name")).toBe("You haven't told me your name yet.");
  });

  it('repeats, does arithmetic in words or digits, tells the time and date', () => {
    expect(reply('say one two three')).toBe('one two three');
    expect(reply('please repeat after me: hello there')).toBe('hello there');
    expect(reply('what is twelve times seven')).toMatch(/ is 84\.$/);
    expect(reply('what is 3 + 4?')).toMatch(/ is 7\.$/);
    expect(reply('two thousand three hundred and five minus five')).toMatch(/ is 2,?300\.$/);
    expect(reply('what is (2 + 3) * -4')).toMatch(/ is -20\.$/);
    // Unbalanced: not arithmetic, so the fallback answers.
    expect(reply('what is (2 + 3 * 4')).toMatch(/^You said/);
    expect(reply('what time is it')).toBe('It is 05:06 UTC.');
    expect(reply("what's the date")).toBe('Today is 2026-03-04.');
  });

  it('greets, thanks, says goodbye, helps, listens, and otherwise says what it heard, clipped', () => {
    expect(reply('hello')).toBe('Hello! What would you like to talk about?');
    expect(reply('thanks a lot')).toBe("You're welcome.");
    expect(reply('ok goodbye')).toBe('Goodbye! Talk to you soon.');
    expect(reply('what can you do')).toContain('built-in offline assistant');
    expect(reply('   ')).toBe('I am listening.');
    expect(reply('first', 'i would like to book a table for two and a window seat please.')).toBe(
      'You said: i would like to book a table for two and a window seat please. That is message 2 of our conversation.',
    );
    const long = `${'word '.repeat(60)}end`;
    expect(reply(long)).toBe(`You said: ${long.slice(0, 200)}…. That is message 1 of our conversation.`);
  });
});
