import { describe, expect, it } from 'vitest';
import { useFakeClock } from '../testing/test-session.ts';
import {
  done,
  finish,
  lookup,
  mentions,
  narrationAfter,
  open,
  openWithToolCall,
  refusalOf,
  report,
  request,
  requests,
  sayWhenMentioned,
  passTime,
  toolResult,
  useRigs,
  utteranceOf,
  WAIT_MS,
} from '../testing/tool-kit.ts';
import type { TestSession } from '../testing/test-session.ts';

/**
 * tool_progress and tool_partial_result (SPEC client frames; "Tool call": they never resolve
 * the call): both enter the model's context; partials are bounded (2 KiB, 8 per call);
 * reply=true asks for a reply now unless one is in flight.
 */

const start = useRigs();
useFakeClock();

/** Sends a frame the server answers with an error, and waits for it: all earlier frames were handled. */
async function barrier(client: TestSession): Promise<void> {
  const after = client.frames.length;
  client.send({ type: 'tool_progress', id: 'call_barrier_unknown', note: 'barrier' });
  await client.waitFor('error', (f) => f.code === 'unknown_tool_call', WAIT_MS, after);
}

describe('tool_progress', () => {
  it('enters the context (next model request has it) and does not resolve the call', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_prog', name: 'lookup', args: { order: 'P' } }],
      question: 'look up P',
      answer: 'Found P.',
    });
    client.send({ type: 'tool_progress', id: 'call_prog', note: 'PROGRESS-NOTE searching the warehouse' });
    await barrier(client);
    await passTime(100);
    expect(requests(rig)).toHaveLength(1);
    expect(client.all('done')).toEqual([]);
    expect(client.all('error')).toHaveLength(1); // the barrier's only

    client.send({ type: 'tool_result', id: 'call_prog', content: 'P found', outcome: 'succeeded', verified: true });
    expect((await done(client, turnId)).status).toBe('completed');
    const next = request(rig, 1);
    expect(mentions(next, 'PROGRESS-NOTE searching the warehouse')).toBe(true);
    expect(toolResult(next, 'call_prog')).toEqual({ outcome: 'succeeded', verified: true, content: 'P found' });
    finish(client, rig);
  });

  it('progress for an unknown or finished call → error unknown_tool_call', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_fin', name: 'lookup', args: { order: 'F' } }],
      question: 'look up F',
      answer: 'ok',
    });
    client.send({ type: 'tool_result', id: 'call_fin', content: 'done', outcome: 'succeeded' });
    await done(client, turnId);
    expect(await refusalOf(client, { type: 'tool_progress', id: 'call_fin', note: 'too late' })).toMatchObject({ code: 'unknown_tool_call', retryable: false });
    finish(client, rig);
  });
});

describe('tool_partial_result', () => {
  it('enters the context without resolving the call', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_part', name: 'lookup', args: { order: 'Q' } }],
      question: 'look up Q',
      answer: 'Here is Q.',
    });
    client.send({ type: 'tool_partial_result', id: 'call_part', content: { first_rows: 'PARTIAL-ROWS-1' } });
    await barrier(client);
    await passTime(100);
    expect(requests(rig)).toHaveLength(1);
    expect(client.all('done')).toEqual([]);
    client.send({ type: 'tool_result', id: 'call_part', content: 'all rows', outcome: 'succeeded', verified: true });
    expect((await done(client, turnId)).status).toBe('completed');
    expect(mentions(request(rig, 1), 'PARTIAL-ROWS-1')).toBe(true);
    expect(toolResult(request(rig, 1), 'call_part')).toEqual({ outcome: 'succeeded', verified: true, content: 'all rows' });
    finish(client, rig);
  });

  it('content up to 2 KiB is accepted, over 2 KiB → partial_too_large; the 9th accepted partial → partial_limit', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_many', name: 'lookup', args: { order: 'M' } }],
      question: 'look up M',
      answer: 'ok',
    });
    // A JSON string of n characters serializes to n + 2 bytes.
    client.send({ type: 'tool_partial_result', id: 'call_many', content: 'a'.repeat(2046) }); // 2048 bytes: accepted (1)
    client.send({ type: 'tool_partial_result', id: 'call_many', content: 'b'.repeat(2047) }); // 2049 bytes: too large
    for (let i = 2; i <= 8; i += 1) client.send({ type: 'tool_partial_result', id: 'call_many', content: `small ${i}` });
    client.send({ type: 'tool_partial_result', id: 'call_many', content: 'NINTH-PARTIAL' });
    await barrier(client);
    const errors = client.all('error');
    expect(errors.map((e) => e.code)).toEqual(['partial_too_large', 'partial_limit', 'unknown_tool_call']);
    expect(errors.slice(0, 2).every((e) => e.retryable === false)).toBe(true);

    client.send({ type: 'tool_result', id: 'call_many', content: 'done', outcome: 'succeeded' });
    await done(client, turnId);
    const next = request(rig, 1);
    expect(mentions(next, 'a'.repeat(2046))).toBe(true);
    expect(mentions(next, 'b'.repeat(2047))).toBe(false);
    expect(mentions(next, 'small 8')).toBe(true);
    expect(mentions(next, 'NINTH-PARTIAL')).toBe(false);
    finish(client, rig);
  });

  it('a partial for an unknown call → error unknown_tool_call', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [lookup] });
    expect(await refusalOf(client, { type: 'tool_partial_result', id: 'call_missing', content: 'x' })).toMatchObject({ code: 'unknown_tool_call', retryable: false });
    finish(client, rig);
  });

  it('reply:true while a reply is in flight does not start another turn', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_busy', name: 'lookup', args: { order: 'Y' } }],
      question: 'look up Y',
      answer: 'All done.',
    });
    // The turn that made the call is still in flight, waiting on it.
    client.send({ type: 'tool_partial_result', id: 'call_busy', content: 'BUSY-PARTIAL', reply: true });
    await barrier(client);
    await passTime(200);
    expect(client.all('turn')).toHaveLength(1);
    expect(requests(rig)).toHaveLength(1);
    client.send({ type: 'tool_result', id: 'call_busy', content: 'done', outcome: 'succeeded' });
    await done(client, turnId);
    await passTime(200);
    expect(client.all('turn')).toHaveLength(1);
    expect(mentions(request(rig, 1), 'BUSY-PARTIAL')).toBe(true);
    finish(client, rig);
  });

  it('reply:true with no reply in flight starts a narration turn that has the partial', async () => {
    const rig = await start();
    rig.fake.script(sayWhenMentioned('FREE-PARTIAL', 'First numbers are in.'));
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_bg', name: 'report', args: {} }],
      question: 'build the report',
      answer: 'Working on it in the background.',
      tools: [report],
    });
    client.send({ type: 'tool_deferred', id: 'call_bg', handle: 'report-1' });
    await client.waitFor('tool_deferred_ack', (f) => f.accepted, WAIT_MS);
    await done(client, turnId);

    const narration = await narrationAfter(client, { type: 'tool_partial_result', id: 'call_bg', content: 'FREE-PARTIAL', reply: true });
    expect((await done(client, narration)).status).toBe('completed');
    expect(utteranceOf(client, narration)).toBe('First numbers are in.');
    expect(requests(rig)).toHaveLength(3);
    expect(mentions(request(rig, 2), 'FREE-PARTIAL')).toBe(true);
    finish(client, rig);
  });

  it('reply defaults to false: a partial with no reply in flight starts no turn', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_quiet', name: 'report', args: {} }],
      question: 'build the report',
      answer: 'Started.',
      tools: [report],
    });
    client.send({ type: 'tool_deferred', id: 'call_quiet', handle: 'report-q' });
    await done(client, turnId);
    client.send({ type: 'tool_partial_result', id: 'call_quiet', content: 'QUIET-PARTIAL' });
    await barrier(client);
    await passTime(200);
    expect(client.all('turn')).toHaveLength(1);
    expect(requests(rig)).toHaveLength(2);
    finish(client, rig);
  });
});
