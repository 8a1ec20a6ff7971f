import { describe, expect, it } from 'vitest';
import { useFakeClock } from '../testing/test-session.ts';
import type { TestSession } from '../testing/test-session.ts';
import {
  ask,
  done,
  finish,
  lookup,
  nextTurn,
  open,
  report,
  request,
  requests,
  toolCallFrame,
  toolNames,
  useRigs,
  weather,
  WAIT_MS,
  type Rig,
} from '../testing/tool-kit.ts';

/**
 * tool_choice (SPEC Mode.toolChoice, set_tool_choice): the choice each model request carries
 * (the port's form; openai-llm.test.ts checks how the adapter puts {tool} and {allowed} on the
 * wire), forced modes only on the first round of a user turn, restricting modes on every round,
 * and one-shot versus persistent set_tool_choice. A start frame's bad choice: start-frame.test.ts.
 */

const start = useRigs();
useFakeClock();

const ALL = ['lookup', 'weather', 'think_deeply'];

/**
 * One user turn in which the model calls `name` on round 0 and answers on round 1.
 * Returns the indexes of the two model requests.
 */
async function turnWithCall(rig: Rig, client: TestSession, name: 'lookup' | 'weather', id: string): Promise<[number, number]> {
  const first = requests(rig).length;
  rig.fake.enqueue({ toolCalls: [{ id, name, args: {} }] }, { text: 'Answer.' });
  const { turnId } = await ask(client, `question for ${id}`);
  await toolCallFrame(client, id);
  client.send({ type: 'tool_result', id, content: 'result', outcome: 'succeeded', verified: true });
  expect((await done(client, turnId)).status).toBe('completed');
  expect(requests(rig)).toHaveLength(first + 2);
  return [first, first + 1];
}

/** One user turn answered with text only; returns its request index. */
async function plainTurn(rig: Rig, client: TestSession, text: string): Promise<number> {
  const first = requests(rig).length;
  rig.fake.enqueue({ text: 'Plain answer.' });
  const { turnId } = await ask(client, text);
  await done(client, turnId);
  expect(requests(rig)).toHaveLength(first + 1);
  return first;
}

describe('tool_choice in the start frame', () => {
  const cases: { name: string; choice: unknown; round0: unknown; round1: unknown; tools: string[] }[] = [
    { name: 'omitted → auto', choice: undefined, round0: 'auto', round1: 'auto', tools: ALL },
    { name: 'auto', choice: 'auto', round0: 'auto', round1: 'auto', tools: ALL },
    { name: 'required: forced on round 0 only', choice: 'required', round0: 'required', round1: 'auto', tools: ALL },
    {
      name: '{tool}: a function choice on round 0 only',
      choice: { tool: 'lookup' },
      round0: { tool: 'lookup' },
      round1: 'auto',
      tools: ALL,
    },
    { name: 'none: holds for every round', choice: 'none', round0: 'none', round1: 'none', tools: ALL },
    { name: '{allowed}: only those tools, every round', choice: { allowed: ['lookup'] }, round0: { allowed: ['lookup'] }, round1: { allowed: ['lookup'] }, tools: ALL },
  ];

  it.each(cases)('$name', async ({ choice, round0, round1, tools }) => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup, weather], ...(choice === undefined ? {} : { tool_choice: choice }) });
    const [r0, r1] = await turnWithCall(rig, client, 'lookup', 'call_tc');
    expect(request(rig, r0).toolChoice).toEqual(round0);
    expect(toolNames(request(rig, r0))).toEqual(tools);
    expect(request(rig, r1).toolChoice).toEqual(round1);
    expect(toolNames(request(rig, r1))).toEqual(tools);
    // And again on the next user turn: forced modes come back for its first round.
    const [n0, n1] = await turnWithCall(rig, client, 'lookup', 'call_tc2');
    expect(request(rig, n0).toolChoice).toEqual(round0);
    expect(request(rig, n1).toolChoice).toEqual(round1);
    finish(client, rig);
  });

  it('{allowed} listing several tools offers exactly those', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup, weather, report], tool_choice: { allowed: ['weather', 'report'] } });
    const r = await plainTurn(rig, client, 'hi');
    expect(request(rig, r).toolChoice).toEqual({ allowed: ['weather', 'report'] });
    finish(client, rig);
  });

  it('a forced mode does not apply to a reply that follows no user turn (a job narration)', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [report], tool_choice: 'required' });
    rig.fake.enqueue({ toolCalls: [{ id: 'call_job', name: 'report', args: {} }] }, { text: 'Started.' });
    const { turnId } = await ask(client, 'make a report');
    await toolCallFrame(client, 'call_job');
    client.send({ type: 'tool_deferred', id: 'call_job', handle: 'job-tc' });
    await done(client, turnId);
    expect(request(rig, 0).toolChoice).toBe('required');
    const after = client.frames.length;
    client.send({ type: 'tool_result', id: 'call_job', content: 'ready', outcome: 'succeeded', verified: true });
    const narration = await nextTurn(client, after);
    await done(client, narration);
    expect(requests(rig)).toHaveLength(3);
    expect(request(rig, 2).toolChoice).toBe('auto');
    finish(client, rig);
  });
});

describe('set_tool_choice', () => {
  it('one_shot: applies to the next user turn only, then the earlier choice returns', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup, weather] });
    client.send({ type: 'set_tool_choice', tool_choice: 'required', one_shot: true });
    const [a0, a1] = await turnWithCall(rig, client, 'lookup', 'call_os1');
    expect(request(rig, a0).toolChoice).toBe('required');
    expect(request(rig, a1).toolChoice).toBe('auto');
    const b = await plainTurn(rig, client, 'and now');
    expect(request(rig, b).toolChoice).toBe('auto');
    finish(client, rig);
  });

  it('one_shot reverts to the start frame choice, not to auto', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup, weather], tool_choice: 'none' });
    client.send({ type: 'set_tool_choice', tool_choice: { tool: 'weather' }, one_shot: true });
    const [a0] = await turnWithCall(rig, client, 'weather', 'call_os2');
    expect(request(rig, a0).toolChoice).toEqual({ tool: 'weather' });
    const b = await plainTurn(rig, client, 'next');
    expect(request(rig, b).toolChoice).toBe('none');
    const c = await plainTurn(rig, client, 'and next');
    expect(request(rig, c).toolChoice).toBe('none');
    finish(client, rig);
  });

  it('one_shot {allowed} holds for every round of that user turn, then reverts', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup, weather] });
    client.send({ type: 'set_tool_choice', tool_choice: { allowed: ['weather'] }, one_shot: true });
    const [a0, a1] = await turnWithCall(rig, client, 'weather', 'call_os3');
    expect(request(rig, a0).toolChoice).toEqual({ allowed: ['weather'] });
    expect(request(rig, a1).toolChoice).toEqual({ allowed: ['weather'] });
    const b = await plainTurn(rig, client, 'next');
    expect(request(rig, b).toolChoice).toBe('auto');
    expect(toolNames(request(rig, b))).toEqual(ALL);
    finish(client, rig);
  });

  it('one_shot none holds for every round of that user turn', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup, weather] });
    client.send({ type: 'set_tool_choice', tool_choice: 'none', one_shot: true });
    // The model calls a tool anyway (a backend may ignore tool_choice): the next round is still 'none'.
    const [a0, a1] = await turnWithCall(rig, client, 'lookup', 'call_os4');
    expect(request(rig, a0).toolChoice).toBe('none');
    expect(request(rig, a1).toolChoice).toBe('none');
    const b = await plainTurn(rig, client, 'next');
    expect(request(rig, b).toolChoice).toBe('auto');
    finish(client, rig);
  });

  it('without one_shot the choice persists', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup, weather] });
    client.send({ type: 'set_tool_choice', tool_choice: 'required' });
    const [a0, a1] = await turnWithCall(rig, client, 'lookup', 'call_p1');
    expect(request(rig, a0).toolChoice).toBe('required');
    expect(request(rig, a1).toolChoice).toBe('auto');
    const [b0] = await turnWithCall(rig, client, 'lookup', 'call_p2');
    expect(request(rig, b0).toolChoice).toBe('required');
    client.send({ type: 'set_tool_choice', tool_choice: { allowed: ['lookup'] } });
    const c = await plainTurn(rig, client, 'next');
    expect(request(rig, c).toolChoice).toEqual({ allowed: ['lookup'] });
    const d = await plainTurn(rig, client, 'and next');
    expect(request(rig, d).toolChoice).toEqual({ allowed: ['lookup'] });
    finish(client, rig);
  });

  it('a persistent set_tool_choice cancels a pending one-shot revert', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup, weather] });
    client.send({ type: 'set_tool_choice', tool_choice: 'required', one_shot: true });
    client.send({ type: 'set_tool_choice', tool_choice: 'none' });
    const a = await plainTurn(rig, client, 'one');
    const b = await plainTurn(rig, client, 'two');
    expect(request(rig, a).toolChoice).toBe('none');
    expect(request(rig, b).toolChoice).toBe('none');
    finish(client, rig);
  });

  it('an invalid tool_choice is rejected with an error and changes nothing', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup] });
    client.send({ type: 'set_tool_choice', tool_choice: 'sometimes' });
    const error = await client.waitFor('error', () => true, WAIT_MS);
    expect(error.retryable).toBe(false);
    const a = await plainTurn(rig, client, 'one');
    expect(request(rig, a).toolChoice).toBe('auto');
    finish(client, rig);
  });

  it('a tool_choice naming an undeclared tool is refused (invalid_tools) and the previous choice stays', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup] });
    for (const tool_choice of [{ tool: 'missing' }, { allowed: ['lookup', 'missing'] }, { tool: 'web_search' }]) {
      const after = client.frames.length;
      client.send({ type: 'set_tool_choice', tool_choice });
      const error = await client.waitFor('error', () => true, WAIT_MS, after);
      expect(error).toMatchObject({ code: 'invalid_tools', retryable: false });
    }
    const a = await plainTurn(rig, client, 'one');
    expect(request(rig, a).toolChoice).toBe('auto');
    finish(client, rig);
  });
});
