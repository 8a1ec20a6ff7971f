import { describe, expect, it } from 'vitest';
import { useFakeClock } from '../testing/test-session.ts';
import type { TestSession } from '../testing/test-session.ts';
import { ask, done, finish, lookup, open, request, requests, toolCallFrame, toolNames, toolResult, useRigs, weather, WAIT_MS, type Rig } from '../testing/tool-kit.ts';

/**
 * set_tools (SPEC client frames; invalid_tools): replaces the client's declarations for the
 * following model requests; an invalid list is refused with invalid_tools and the old one stays.
 */

const start = useRigs();
useFakeClock();

/** One plain user turn; returns its model request index. */
async function plainTurn(rig: Rig, client: TestSession, text: string): Promise<number> {
  const index = requests(rig).length;
  rig.fake.enqueue({ text: 'ok' });
  const { turnId } = await ask(client, text);
  await done(client, turnId);
  expect(requests(rig)).toHaveLength(index + 1);
  return index;
}

describe('set_tools', () => {
  it('replaces the list: the next model request offers the new tools, with their declarations', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup] });
    const a = await plainTurn(rig, client, 'one');
    expect(toolNames(request(rig, a))).toEqual(['lookup', 'think_deeply']);

    const book = { name: 'book', description: 'Book a table', parameters: { type: 'object', properties: { people: { type: 'integer' } } } };
    client.send({ type: 'set_tools', tools: [weather, book] });
    const b = await plainTurn(rig, client, 'two');
    expect(toolNames(request(rig, b))).toEqual(['weather', 'book', 'think_deeply']);
    expect(request(rig, b).tools.find((t) => t.name === 'book')).toEqual({ name: 'book', description: 'Book a table', parameters: book.parameters });
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });

  it('an empty list removes every client tool', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup, weather] });
    client.send({ type: 'set_tools', tools: [] });
    const a = await plainTurn(rig, client, 'one');
    expect(toolNames(request(rig, a))).toEqual(['think_deeply']);
    finish(client, rig);
  });

  it('a removed tool is no longer run: the model is told it does not exist, no tool_call is sent', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup] });
    client.send({ type: 'set_tools', tools: [weather] });
    rig.fake.enqueue({ toolCalls: [{ id: 'call_old', name: 'lookup', args: { order: '1' } }] }, { text: 'Cannot.' });
    const { turnId } = await ask(client, 'look up 1');
    await done(client, turnId);
    expect(client.all('tool_call')).toEqual([]);
    expect(toolResult(request(rig, 1), 'call_old')?.outcome).toBe('failed');
    // The new tool is run.
    rig.fake.enqueue({ toolCalls: [{ id: 'call_new', name: 'weather', args: { city: 'Oslo' } }] }, { text: 'Sunny.' });
    const next = await ask(client, 'weather in Oslo');
    await toolCallFrame(client, 'call_new');
    client.send({ type: 'tool_result', id: 'call_new', content: 'sunny', outcome: 'succeeded', verified: true });
    await done(client, next.turnId);
    finish(client, rig);
  });

  const invalid: { name: string; mode: Record<string, unknown>; tools: unknown[] }[] = [
    { name: 'duplicate names', mode: {}, tools: [weather, { ...weather, description: 'again' }] },
    { name: 'a bad name', mode: {}, tools: [{ name: 'bad name!' }] },
    { name: 'an over-long name', mode: {}, tools: [{ name: 'x'.repeat(65) }] },
    { name: 'reserved end_call while mode.end_call', mode: { end_call: true }, tools: [{ name: 'end_call' }] },
    { name: 'always-reserved think_deeply', mode: {}, tools: [{ name: 'think_deeply' }] },
    { name: 'always-reserved cancel_pending_job', mode: {}, tools: [{ name: 'cancel_pending_job' }] },
    { name: 'an unknown field', mode: {}, tools: [{ name: 'ok_name', colour: 'blue' }] },
    { name: 'parameters that are not an object schema', mode: {}, tools: [{ name: 'ok_name', parameters: { type: 'string' } }] },
    { name: 'timeout_ms below the minimum', mode: {}, tools: [{ name: 'ok_name', timeout_ms: 5 }] },
  ];

  it.each(invalid)('$name → error invalid_tools; the old list is kept', async ({ mode, tools }) => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup], ...mode });
    client.send({ type: 'set_tools', tools });
    const error = await client.waitFor('error', () => true, WAIT_MS);
    expect(error).toMatchObject({ code: 'invalid_tools', retryable: false, detail: expect.any(String) });
    expect(client.closed).toBeUndefined();
    const a = await plainTurn(rig, client, 'still there?');
    expect(toolNames(request(rig, a))).toContain('lookup');
    expect(toolNames(request(rig, a))).not.toContain('weather');
    expect(client.all('error')).toHaveLength(1);
    finish(client, rig);
  });

  it('end_call is an ordinary client tool name while mode.end_call is off', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup] });
    client.send({ type: 'set_tools', tools: [{ name: 'end_call', description: 'hang up the phone line' }] });
    const a = await plainTurn(rig, client, 'one');
    expect(client.all('error')).toEqual([]);
    expect(toolNames(request(rig, a))).toEqual(['end_call', 'think_deeply']);
    expect(request(rig, a).tools[0]?.description).toBe('hang up the phone line');
    finish(client, rig);
  });
});
