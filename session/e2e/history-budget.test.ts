import { describe, expect, it } from 'vitest';
import { say, sid, textStart } from '../../signaling/testing/conversation.ts';
import { useServerWithFakeModel } from '../../signaling/testing/fake-model-server.ts';
import { startSession } from '../../signaling/testing/ws-test-client.ts';

/**
 * HISTORY_MAX_CHARS from the configuration reaches the session: the model request over the
 * server stays within it. The long call itself: session/history-budget.test.ts (unit ring).
 */
const servers = useServerWithFakeModel({ HISTORY_MAX_CHARS: '4000' });

describe('HISTORY_MAX_CHARS', () => {
  it('is the budget of the model requests of a session on the server', async () => {
    const instructions = 'Answer in one word.';
    const { client } = await startSession(servers.t.wsUrl, { ...textStart(sid('long'), { greeting: false, instructions }), api_key: servers.t.key });
    servers.fake.script(() => ({ text: 'Noted.' }));
    // 4 × 1,500 characters: over a 4,000 budget, well within the default 100,000.
    for (let i = 0; i < 4; i += 1) await say(client, `turn ${i} ${'w'.repeat(1500)}`);
    const last = servers.fake.requests.at(-1) as { messages: { role: string; content: string }[] };
    const [system, ...conversation] = last.messages;
    expect(system!.content).toContain(instructions);
    expect(conversation.reduce((n, m) => n + m.content.length, 0)).toBeLessThanOrEqual(4000);
    expect(conversation.at(-1)!.content).toBe(`turn 3 ${'w'.repeat(1500)}`);
    expect(conversation[0]!.content).toMatch(/left out/);
    client.close();
  });
});
