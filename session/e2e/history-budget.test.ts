import { describe, expect, it } from 'vitest';
import { say, sid, textStart } from '../../signaling/testing/conversation.ts';
import { useServerWithFakeModel } from '../../signaling/testing/fake-model-server.ts';
import { startSession } from '../../signaling/testing/ws-test-client.ts';

/** A long call with long turns: the model request stays within instructions + HISTORY_MAX_CHARS. */
const servers = useServerWithFakeModel({ HISTORY_MAX_CHARS: '20000' });

describe('HISTORY_MAX_CHARS', () => {
  it('40 turns of 4,000 characters: every model request stays within the budget, the latest turn whole', { timeout: 60000 }, async () => {
    const instructions = 'Answer in one word.';
    const { client } = await startSession(servers.t.wsUrl, { ...textStart(sid('long'), { greeting: false, instructions }), api_key: servers.t.key });
    servers.fake.script(() => ({ text: 'Noted.' }));
    for (let i = 0; i < 40; i += 1) await say(client, `turn ${i} ${'w'.repeat(4000)}`);
    const last = servers.fake.requests.at(-1) as { messages: { role: string; content: string }[] };
    const [system, ...conversation] = last.messages;
    expect(system!.content).toContain(instructions);
    const size = conversation.reduce((n, m) => n + m.content.length, 0);
    expect(size).toBeLessThanOrEqual(20_000);
    expect(conversation.at(-1)!.content).toBe(`turn 39 ${'w'.repeat(4000)}`);
    expect(conversation[0]!.content).toMatch(/left out/);
    client.close();
  });
});
