import { describe, expect, it } from 'vitest';
import { say } from './testing/conversation.ts';
import { FakeLanguageModel } from './testing/fake-llm.ts';
import { openTestSession, useFakeClock } from './testing/test-session.ts';

/**
 * HISTORY_MAX_CHARS seen from the model: a long call with long turns, every request within
 * instructions + the budget. The trimming itself: history.test.ts; the setting reaching the
 * session from the configuration: e2e/history-budget.test.ts.
 */

useFakeClock();

describe('HISTORY_MAX_CHARS', () => {
  it('40 turns of 4,000 characters: every model request stays within the budget, the latest turn whole', async () => {
    const instructions = 'Answer in one word.';
    const llm = new FakeLanguageModel();
    llm.script(() => ({ text: 'Noted.' }));
    const client = openTestSession({ llm, historyMaxChars: 20_000, mode: { greeting: false, instructions } });
    for (let i = 0; i < 40; i += 1) await say(client, `turn ${i} ${'w'.repeat(4000)}`);
    expect(llm.requests).toHaveLength(40);
    for (const [i, request] of llm.requests.entries()) {
      const [system, ...conversation] = request.messages;
      expect(system!.content).toContain(instructions);
      expect(conversation.reduce((n, m) => n + m.content.length, 0), `request ${i}`).toBeLessThanOrEqual(20_000);
      expect(conversation.at(-1)!.content).toBe(`turn ${i} ${'w'.repeat(4000)}`);
    }
    expect(llm.requests.at(-1)!.messages[1]!.content).toMatch(/left out/);
    client.assertProtocol();
  });
});
