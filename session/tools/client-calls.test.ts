import { describe, expect, it } from 'vitest';
import { useFakeClock } from '../testing/test-session.ts';
import {
  ask,
  assistantCall,
  done,
  finish,
  lookup,
  mentions,
  narrationAfter,
  open,
  openWithToolCall,
  pos,
  request,
  requests,
  passTime,
  toolCallFrame,
  toolResult,
  refusalOf,
  report,
  sayWhenMentioned,
  useRigs,
  utteranceOf,
  WAIT_MS,
  waitRequests,
} from '../testing/tool-kit.ts';

/**
 * Client tool calls over the real socket (SPEC "Tool call", tool_call / tool_result /
 * tool_cancel, "Working signal"): the server sends tool_call, the client answers, and the next
 * model request carries the call and a tool message {outcome, verified, content}.
 */

const start = useRigs();
useFakeClock();

describe('tool_call → tool_result round trip', () => {
  const cases: { name: string; fields: Record<string, unknown>; expected: { outcome: string; verified: boolean } }[] = [
    { name: 'succeeded + verified', fields: { outcome: 'succeeded', verified: true }, expected: { outcome: 'succeeded', verified: true } },
    { name: 'succeeded, unverified', fields: { outcome: 'succeeded' }, expected: { outcome: 'succeeded', verified: false } },
    { name: 'failed', fields: { outcome: 'failed' }, expected: { outcome: 'failed', verified: false } },
    { name: 'cancelled', fields: { outcome: 'cancelled' }, expected: { outcome: 'cancelled', verified: false } },
    { name: 'timed_out', fields: { outcome: 'timed_out' }, expected: { outcome: 'timed_out', verified: false } },
    { name: 'unknown', fields: { outcome: 'unknown' }, expected: { outcome: 'unknown', verified: false } },
    { name: 'missing outcome → unknown', fields: {}, expected: { outcome: 'unknown', verified: false } },
    { name: 'invalid outcome → unknown', fields: { outcome: 'done', verified: true }, expected: { outcome: 'unknown', verified: false } },
    { name: 'verified:true with failed → verified false', fields: { outcome: 'failed', verified: true }, expected: { outcome: 'failed', verified: false } },
    { name: 'invalid verified → false', fields: { outcome: 'succeeded', verified: 'yes' }, expected: { outcome: 'succeeded', verified: false } },
  ];

  it.each(cases)('$name', async ({ fields, expected }) => {
    const rig = await start();
    const { client, turnId, calls: [call] } = await openWithToolCall(rig, {
      calls: [{ id: 'call_rt', name: 'lookup', args: { order: 'A-17' } }],
      question: 'where is my order',
      answer: 'Your order is on its way.',
    });
    expect(call).toEqual({ type: 'tool_call', id: 'call_rt', name: 'lookup', args: { order: 'A-17' } });
    // SPEC Working signal: the turn waits on a result with nothing to say.
    const on = await client.waitFor('working', (f) => f.active, WAIT_MS);
    // The model is not asked again while the call is open.
    await passTime(100);
    expect(requests(rig)).toHaveLength(1);
    expect(client.all('done')).toHaveLength(0);

    client.send({ type: 'tool_result', id: 'call_rt', content: { status: 'shipped', eta: 'tomorrow' }, ...fields });
    const end = await done(client, turnId);
    expect(end.status).toBe('completed');
    expect(utteranceOf(client, turnId)).toBe('Your order is on its way.');

    expect(requests(rig)).toHaveLength(2);
    const next = request(rig, 1);
    const asked = assistantCall(next, 'call_rt');
    expect(asked).toEqual({ id: 'call_rt', name: 'lookup', args: { order: 'A-17' } });
    expect(toolResult(next, 'call_rt')).toEqual({ ...expected, content: { status: 'shipped', eta: 'tomorrow' } });

    // working true while waiting, false after it, both before done; exactly one of each.
    const working = client.all('working');
    expect(working.map((w) => w.active)).toEqual([true, false]);
    expect(pos(client, on)).toBeLessThan(pos(client, working[1]));
    expect(pos(client, working[1])).toBeLessThan(pos(client, end));
    const types = client.turnTypes(turnId);
    expect(types.slice(0, 2)).toEqual(['asr', 'turn']);
    expect(types.slice(-2)).toEqual(['utterance', 'done']);
    expect(types).toContain('text_delta');
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });

  it('content may be any JSON (string, array, null) and reaches the model unchanged', async () => {
    const rig = await start();
    const contents: unknown[] = ['plain text', [1, 'two', { three: 3 }], null];
    for (const [i] of contents.entries()) {
      rig.fake.enqueue({ toolCalls: [{ id: `call_any_${i}`, name: 'lookup', args: { order: String(i) } }] }, { text: `answer ${i}` });
    }
    const client = await open(rig, { tools: [lookup] });
    for (const [i, content] of contents.entries()) {
      const { turnId } = await ask(client, `question ${i}`);
      await toolCallFrame(client, `call_any_${i}`);
      client.send({ type: 'tool_result', id: `call_any_${i}`, content, outcome: 'succeeded' });
      expect((await done(client, turnId)).status).toBe('completed');
      expect(toolResult(request(rig, 2 * i + 1), `call_any_${i}`)).toEqual({ outcome: 'succeeded', verified: false, content });
    }
    finish(client, rig);
  });

  it('several calls in one round: each gets its own tool_call, the model gets every result', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [
        { id: 'call_a', name: 'lookup', args: { order: 'A' } },
        { id: 'call_b', name: 'lookup', args: { order: 'B' } },
      ],
      question: 'check A and B',
      answer: 'Both found.',
    });
    client.send({ type: 'tool_result', id: 'call_b', content: 'B ok', outcome: 'succeeded', verified: true });
    await passTime(100);
    // One answer is not enough: the round waits for both.
    expect(requests(rig)).toHaveLength(1);
    client.send({ type: 'tool_result', id: 'call_a', content: 'A failed', outcome: 'failed' });
    expect((await done(client, turnId)).status).toBe('completed');
    const next = request(rig, 1);
    expect(toolResult(next, 'call_a')).toEqual({ outcome: 'failed', verified: false, content: 'A failed' });
    expect(toolResult(next, 'call_b')).toEqual({ outcome: 'succeeded', verified: true, content: 'B ok' });
    finish(client, rig);
  });

  it('a call of an undeclared tool is not sent to the client; the model is told it failed', async () => {
    const rig = await start();
    rig.fake.enqueue({ toolCalls: [{ id: 'call_ghost', name: 'teleport', args: {} }] }, { text: 'I cannot do that.' });
    const client = await open(rig, { tools: [lookup] });
    const { turnId } = await ask(client, 'teleport me');
    expect((await done(client, turnId)).status).toBe('completed');
    expect(client.all('tool_call')).toEqual([]);
    expect(toolResult(request(rig, 1), 'call_ghost')?.outcome).toBe('failed');
    finish(client, rig);
  });
});

describe('timeouts', () => {
  it('timeout_ms in the declaration → server tool_cancel {id}; the model is told timed_out', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_slow', name: 'slow', args: {} }],
      question: 'do the slow thing',
      answer: 'That took too long.',
      tools: [{ name: 'slow', timeout_ms: 300 }],
    });
    const cancel = await client.waitFor('tool_cancel', (f) => f.id === 'call_slow', WAIT_MS);
    expect(cancel).toEqual({ type: 'tool_cancel', id: 'call_slow' });
    const end = await done(client, turnId);
    expect(end.status).toBe('completed');
    expect(pos(client, cancel)).toBeLessThan(pos(client, end));
    expect(toolResult(request(rig, 1), 'call_slow')).toMatchObject({ outcome: 'timed_out', verified: false });
    expect(utteranceOf(client, turnId)).toBe('That took too long.');

    // A result after the timeout changes nothing.
    const error = await refusalOf(client, { type: 'tool_result', id: 'call_slow', content: 'late', outcome: 'succeeded', verified: true });
    expect(error).toMatchObject({ code: 'unknown_tool_call', retryable: false });
    await passTime(100);
    expect(requests(rig)).toHaveLength(2);
    finish(client, rig);
  });

  it('TOOL_TIMEOUT_MS applies to tools without timeout_ms', async () => {
    const rig = await start({ tools: { defaultTimeoutMs: 300 } });
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_default', name: 'lookup', args: { order: 'X' } }],
      question: 'look it up',
      answer: 'No answer in time.',
    });
    await client.waitFor('tool_cancel', (f) => f.id === 'call_default', WAIT_MS);
    expect((await done(client, turnId)).status).toBe('completed');
    expect(toolResult(request(rig, 1), 'call_default')).toMatchObject({ outcome: 'timed_out', verified: false });
    finish(client, rig);
  });

  it("a declaration's timeout_ms outranks TOOL_TIMEOUT_MS", async () => {
    const rig = await start({ tools: { defaultTimeoutMs: 200 } });
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_patient', name: 'patient', args: {} }],
      question: 'take your time',
      answer: 'Done.',
      tools: [{ name: 'patient', timeout_ms: 60_000 }],
    });
    await passTime(1000);
    expect(client.all('tool_cancel')).toEqual([]);
    client.send({ type: 'tool_result', id: 'call_patient', content: 'finished', outcome: 'succeeded', verified: true });
    expect((await done(client, turnId)).status).toBe('completed');
    expect(toolResult(request(rig, 1), 'call_patient')).toEqual({ outcome: 'succeeded', verified: true, content: 'finished' });
    finish(client, rig);
  });
});

describe('cancel and stray results', () => {
  it('tool_cancel from the client → the model is told cancelled; nothing is echoed back', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_c', name: 'lookup', args: { order: 'C' } }],
      question: 'look up C',
      answer: 'Cancelled it.',
    });
    client.send({ type: 'tool_cancel', id: 'call_c' });
    expect((await done(client, turnId)).status).toBe('completed');
    expect(toolResult(request(rig, 1), 'call_c')).toMatchObject({ outcome: 'cancelled', verified: false });
    expect(client.all('tool_cancel')).toEqual([]);
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });

  it('tool_cancel for an unknown or finished call → error unknown_tool_call', async () => {
    const rig = await start();
    rig.fake.enqueue({ toolCalls: [{ id: 'call_f', name: 'lookup', args: { order: 'F' } }] }, { text: 'ok' });
    const client = await open(rig, { tools: [lookup] });
    expect(await refusalOf(client, { type: 'tool_cancel', id: 'call_unknown' })).toMatchObject({ code: 'unknown_tool_call', retryable: false });
    const { turnId } = await ask(client, 'look up F');
    await toolCallFrame(client, 'call_f');
    client.send({ type: 'tool_result', id: 'call_f', content: 'F', outcome: 'succeeded' });
    await done(client, turnId);
    expect(await refusalOf(client, { type: 'tool_cancel', id: 'call_f' })).toMatchObject({ code: 'unknown_tool_call' });
    expect(client.all('error')).toHaveLength(2);
    finish(client, rig);
  });

  it('tool_result for an unknown id → error unknown_tool_call; the open call is untouched', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_real', name: 'lookup', args: { order: 'R' } }],
      question: 'look up R',
      answer: 'Found it.',
    });
    const error = await refusalOf(client, { type: 'tool_result', id: 'call_nope', content: 'STRAY-CONTENT', outcome: 'succeeded', verified: true });
    expect(error).toMatchObject({ code: 'unknown_tool_call', retryable: false, detail: expect.any(String) });
    await passTime(100);
    expect(requests(rig)).toHaveLength(1);
    expect(client.all('done')).toEqual([]);

    client.send({ type: 'tool_result', id: 'call_real', content: 'R is here', outcome: 'succeeded', verified: true });
    expect((await done(client, turnId)).status).toBe('completed');
    const next = request(rig, 1);
    expect(toolResult(next, 'call_real')).toEqual({ outcome: 'succeeded', verified: true, content: 'R is here' });
    expect(mentions(next, 'STRAY-CONTENT')).toBe(false);
    expect(client.all('error')).toHaveLength(1);
    finish(client, rig);
  });

  it('a second tool_result for the same id → error; the model is not asked again', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_twice', name: 'lookup', args: { order: 'T' } }],
      question: 'look up T',
      answer: 'First answer.',
      later: [{ text: 'pong' }],
    });
    client.send({ type: 'tool_result', id: 'call_twice', content: 'one', outcome: 'succeeded' });
    await done(client, turnId);
    expect(requests(rig)).toHaveLength(2);

    const error = await refusalOf(client, { type: 'tool_result', id: 'call_twice', content: 'SECOND-RESULT', outcome: 'succeeded', verified: true });
    expect(error).toMatchObject({ code: 'unknown_tool_call', retryable: false });

    // A later turn is the only new model request, and it does not carry the second result.
    const ping = await ask(client, 'ping');
    await done(client, ping.turnId);
    expect(requests(rig)).toHaveLength(3);
    expect(request(rig, 2).messages.at(-1)).toMatchObject({ role: 'user', content: 'ping' });
    expect(mentions(request(rig, 2), 'SECOND-RESULT')).toBe(false);
    expect(client.all('turn')).toHaveLength(2);
    finish(client, rig);
  });
});

describe('interruption while a call is open', () => {
  it('interrupt → interrupted + done; the late result is accepted, reaches the model and is narrated; the tool ran once', async () => {
    const rig = await start();
    // No answer queued after the call: every later reply comes from the script.
    rig.fake.script(sayWhenMentioned('LATE-RESULT-77', 'Order B-2 has shipped.'));
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_int', name: 'lookup', args: { order: 'B-2' } }],
      question: 'where is B-2',
    });
    await client.waitFor('working', (f) => f.active, WAIT_MS);

    client.send({ type: 'interrupt' });
    const interrupted = await client.waitFor('interrupted', (f) => f.turn_id === turnId, WAIT_MS);
    const end = await done(client, turnId);
    expect(end.status).toBe('interrupted');
    expect(pos(client, interrupted)).toBeLessThan(pos(client, end));
    const off = client.all('working').find((w) => !w.active);
    expect(pos(client, off)).toBeLessThan(pos(client, end));

    const narration = await narrationAfter(client, { type: 'tool_result', id: 'call_int', content: { tracking: 'LATE-RESULT-77' }, outcome: 'succeeded', verified: true });
    expect(narration).not.toBe(turnId);
    expect((await done(client, narration)).status).toBe('completed');
    expect(utteranceOf(client, narration)).toBe('Order B-2 has shipped.');

    expect(client.all('error')).toEqual([]);
    expect(client.all('tool_call').filter((f) => f.id === 'call_int')).toHaveLength(1);
    const told = requests(rig).filter((body) => body.messages.some((m) => (m.content ?? '').includes('LATE-RESULT-77')));
    expect(told.length).toBeGreaterThanOrEqual(1);
    // The interrupted call stays in the model's context: the call and an answer for it.
    const narrated = told.at(-1)!;
    expect(assistantCall(narrated, 'call_int')).toMatchObject({ name: 'lookup' });
    expect(toolResult(narrated, 'call_int')).toBeDefined();
    finish(client, rig);
  });

  it('a typed turn cutting in on an open call: the new request is valid and the late result still reaches the model', async () => {
    const rig = await start();
    rig.fake.script(() => ({ text: 'ok' }));
    const { client, turnId: firstTurnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_cut', name: 'lookup', args: { order: 'C-3' } }],
      question: 'where is C-3',
      answer: 'Sure, something else.',
    });
    const second = await ask(client, 'actually, never mind');
    expect((await done(client, firstTurnId)).status).toBe('interrupted');
    expect((await done(client, second.turnId)).status).toBe('completed');
    expect(request(rig, 1).messages.at(-1)).toMatchObject({ role: 'user', content: 'actually, never mind' });

    const narration = await narrationAfter(client, { type: 'tool_result', id: 'call_cut', content: 'CUT-RESULT-5', outcome: 'succeeded' });
    await done(client, narration);
    const told = requests(rig).filter((body) => mentions(body, 'CUT-RESULT-5'));
    expect(told.length).toBeGreaterThanOrEqual(1);
    // The history keeps the order things happened in: the call, its answer, then the new turn.
    const messages = told.at(-1)!.messages;
    const callAt = messages.findIndex((m) => m.role === 'assistant' && m.tool_calls?.some((c) => c.id === 'call_cut'));
    const userAt = messages.findIndex((m) => m.role === 'user' && m.content === 'actually, never mind');
    expect(callAt).toBeGreaterThan(0);
    expect(callAt).toBeLessThan(userAt);
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });

  it('reset while a call is open: later requests are valid (no orphan tool message)', async () => {
    const rig = await start();
    const { client, turnId: firstTurnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_reset', name: 'lookup', args: { order: 'Z' } }],
      question: 'look up Z',
      answer: 'Fresh start.',
    });
    client.send({ type: 'reset' });
    expect((await done(client, firstTurnId)).status).toBe('interrupted');
    const second = await ask(client, 'hello again');
    await done(client, second.turnId);
    await waitRequests(rig, 2);
    expect(request(rig, 1).messages.filter((m) => m.role !== 'system')).toEqual([{ role: 'user', content: 'hello again' }]);
    finish(client, rig);
  });

  it('a model that reuses call ids across replies never overwrites a running call: the server makes ids unique', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [report] });
    rig.fake.enqueue({ toolCalls: [{ id: 'call_0', name: 'report', args: {} }] }, { text: 'Started.' });
    const first = await ask(client, 'first report');
    await toolCallFrame(client, 'call_0');
    client.send({ type: 'tool_deferred', id: 'call_0', handle: 'h-a' });
    await done(client, first.turnId);
    rig.fake.enqueue({ toolCalls: [{ id: 'call_0', name: 'report', args: {} }] }, { text: 'Started again.' });
    const second = await ask(client, 'second report');
    const call = await client.waitFor('tool_call', (f) => f.id !== 'call_0', WAIT_MS);
    expect(call.id).toBe('call_0~2');
    client.send({ type: 'tool_result', id: call.id, content: 'second done', outcome: 'succeeded', verified: true });
    await done(client, second.turnId);
    // The first call is still deferred and still answerable.
    client.send({ type: 'tool_result', id: 'call_0', content: 'first done', outcome: 'succeeded', verified: true });
    await client.waitFor('turn', (f) => f.turn_id !== first.turnId && f.turn_id !== second.turnId, WAIT_MS);
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });
});
