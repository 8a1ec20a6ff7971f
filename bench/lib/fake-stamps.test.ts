import { afterAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer } from '../../session/testing/fake-openai-server.ts';
import { splitTurns, toNs } from './fake-stamps.ts';

const fake = await startFakeOpenAiServer();
afterAll(() => fake.close());

async function ask(text: string): Promise<string> {
  const response = await fetch(`${fake.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: text }] }),
  });
  return response.text();
}

describe("the fake model's stamps", () => {
  it('stamp each reply once, its first text sent (handed to the socket) no earlier than queued', async () => {
    const seen: { arrived: bigint; sent: bigint; queued: bigint; body: unknown }[] = [];
    fake.onFirstText = (arrived, sent, body, queued) => seen.push({ arrived, sent, queued, body });
    fake.script(() => ({ text: 'one two three four five six seven eight' }));
    const body = await ask('hello t1');
    expect(body).toContain('data: [DONE]');
    expect(seen).toHaveLength(1);
    const [s] = seen;
    expect((s?.body as { messages: { content: string }[] }).messages[0]?.content).toBe('hello t1');
    expect(s!.arrived <= s!.queued && s!.queued <= s!.sent).toBe(true);
    fake.onFirstText = undefined;
  });

  it('split a turn into request side, response side, the fake and the part of it Node held', () => {
    const sentMs = 1000;
    const at = (ms: number): bigint => toNs(sentMs + ms);
    const [split] = splitTurns([{ key: 'k', sentMs, latencyMs: 5 }], new Map([['k', [at(1), at(3), at(2.5)]]]));
    expect(split?.requestMs).toBeCloseTo(1, 5);
    expect(split?.fakeMs).toBeCloseTo(2, 5);
    expect(split?.heldMs).toBeCloseTo(0.5, 5);
    expect(split?.responseMs).toBeCloseTo(2, 5);
    expect(splitTurns([{ key: 'unstamped', sentMs, latencyMs: 5 }], new Map())).toEqual([]);
  });
});
