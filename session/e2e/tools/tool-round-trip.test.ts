import { describe, expect, it } from 'vitest';
import { assistantCall, done, finish, openWithToolCall, pos, request, requests, toolResult, useRigs, utteranceOf, WAIT_MS } from './tool-test-kit.ts';

/**
 * One client tool call over the real socket and the real OpenAI-compatible adapter (SPEC "Tool
 * call", "Working signal"): tool_call goes out on the wire, tool_result comes back, and the next
 * Chat Completions request carries the call and its tool message, valid for a real backend. The
 * tool behaviours themselves are unit tests: session/tools/*.test.ts.
 */

const start = useRigs();

describe('tool_call → tool_result over the wire', () => {
  it('the model request after the result carries the call and {outcome, verified, content}', async () => {
    const rig = await start();
    const { client, turnId, calls: [call] } = await openWithToolCall(rig, {
      calls: [{ id: 'call_rt', name: 'lookup', args: { order: 'A-17' } }],
      question: 'where is my order',
      answer: 'Your order is on its way.',
    });
    expect(call).toEqual({ type: 'tool_call', id: 'call_rt', name: 'lookup', args: { order: 'A-17' } });
    const on = await client.waitFor('working', (f) => f.active, WAIT_MS);

    client.send({ type: 'tool_result', id: 'call_rt', content: { status: 'shipped', eta: 'tomorrow' }, outcome: 'succeeded', verified: true });
    const end = await done(client, turnId);
    expect(end.status).toBe('completed');
    expect(utteranceOf(client, turnId)).toBe('Your order is on its way.');

    // One request per round: the open call did not make the server ask the model again.
    expect(requests(rig)).toHaveLength(2);
    const next = request(rig, 1);
    const asked = assistantCall(next, 'call_rt');
    expect(asked).toMatchObject({ id: 'call_rt', type: 'function', function: { name: 'lookup' } });
    expect(JSON.parse(asked?.function.arguments ?? 'null')).toEqual({ order: 'A-17' });
    expect(toolResult(next, 'call_rt')).toEqual({ outcome: 'succeeded', verified: true, content: { status: 'shipped', eta: 'tomorrow' } });

    const working = client.all('working');
    expect(working.map((w) => w.active)).toEqual([true, false]);
    expect(pos(client, on)).toBeLessThan(pos(client, working[1]));
    expect(pos(client, working[1])).toBeLessThan(pos(client, end));
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });
});
