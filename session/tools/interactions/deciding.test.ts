import { describe, expect, it } from 'vitest';
import { useFakeClock } from '../../testing/test-session.ts';
import type { TestSession } from '../../testing/test-session.ts';
import { ask, done, finish, request, requests, passTime, toolNames, toolResult, WAIT_MS, type Rig, type RecordedRequest } from '../../testing/tool-kit.ts';
import {
  barrier,
  book,
  busyFloor,
  confirm,
  deferredJob,
  guarded,
  lookup,
  narration,
  narrationTurn,
  openSession,
  raise,
  statesOf,
  update,
  useInteractionRigs,
} from '../../testing/interaction-kit.ts';

/**
 * Deciding (SPEC "Interaction", Resolver fields): once an ask was voiced, the first planning
 * round of every later user turn is constrained to interaction_transition until the decision is
 * settled, outranking mode.toolChoice; its actions; resolver bindings run through tool_call.
 */

const start = useInteractionRigs();
useFakeClock();
const FORCED = { tool: 'interaction_transition' };
const slowConfirm = { name: 'confirm_slow', description: 'Confirm, slowly', timeout_ms: 300 };

let seq = 0;

/** A deferred job with a voiced ask on it (its narration turn completed). */
async function voicedAsk(rig: Rig, client: TestSession, interaction: Record<string, unknown>): Promise<void> {
  await deferredJob(rig, client);
  raise(client, 'call_job', interaction);
  await done(client, await narrationTurn(client, await narration(client, 'started', interaction.id as string)));
}

interface Decided {
  r0: RecordedRequest;
  r1: RecordedRequest;
  result: { outcome: string; verified: boolean; content: any } | undefined;
}

/** A user turn whose round 0 calls interaction_transition with `args`; `during` runs while it waits. */
async function decide(rig: Rig, client: TestSession, text: string, args: Record<string, unknown>, during?: () => Promise<void>): Promise<Decided> {
  const first = requests(rig).length;
  const id = `call_tr_${(seq += 1)}`;
  rig.fake.enqueue({ toolCalls: [{ id, name: 'interaction_transition', args }] });
  const { turnId } = await ask(client, text);
  if (during) await during();
  await done(client, turnId);
  const r1 = request(rig, first + 1);
  return { r0: request(rig, first), r1, result: toolResult(r1, id) as Decided['result'] };
}

/** A user turn answered with text only; returns its (only) request. */
async function plainTurn(rig: Rig, client: TestSession, text: string): Promise<RecordedRequest> {
  const first = requests(rig).length;
  const { turnId } = await ask(client, text);
  await done(client, turnId);
  return request(rig, first);
}

/** Answers the next tool_call of `name` (from `after` on) and returns it. */
async function answer(client: TestSession, name: string, result: Record<string, unknown>, after = 0) {
  const call = await client.waitFor('tool_call', (f) => f.name === name, WAIT_MS, after);
  client.send({ type: 'tool_result', id: call.id, ...result });
  return call;
}

describe('the forced interaction_transition round', () => {
  it('after an ask was voiced, round 0 of every later user turn is forced to interaction_transition until settled; later rounds are not', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, { id: 'ask-f', prompt: 'Small or large?', options: ['small', 'large'] });

    const clarify = await decide(rig, client, 'hmm', { interaction_id: 'ask-f', action: 'clarify', message: 'Which size?' });
    expect(clarify.r0.toolChoice).toEqual(FORCED);
    const offered = clarify.r0.tools!.find((t) => t.name === 'interaction_transition')!;
    expect(offered.parameters).toMatchObject({ properties: { interaction_id: { enum: ['ask-f'] }, choice: { enum: ['small', 'large'] } } });
    expect(offered.description).toContain('Small or large?');
    expect(clarify.r1.toolChoice).toBe('auto');
    expect(clarify.result).toMatchObject({ outcome: 'succeeded', content: { interaction_id: 'ask-f', action: 'clarify', status: 'still open' } });

    // clarify keeps it open: the next user turn is forced again; an unbound resolve settles it.
    const resolved = await decide(rig, client, 'large', { interaction_id: 'ask-f', action: 'resolve', choice: 'Large' });
    expect(resolved.r0.toolChoice).toEqual(FORCED);
    expect(resolved.result).toMatchObject({ outcome: 'succeeded', verified: false, content: { interaction_id: 'ask-f', choice: 'large' } });
    expect(resolved.r1.messages.some((m) => (m.content ?? '').includes("decision on interaction ask-f") && (m.content ?? '').includes('large'))).toBe(true);

    const after = await plainTurn(rig, client, 'thanks');
    expect(after.toolChoice).toBe('auto');
    expect(toolNames(after)).not.toContain('interaction_transition');
    // The model's decision is not a close: the narration stays started until the host or the call closes it.
    expect(statesOf(client, 'ask-f')).toEqual(['started']);
    finish(client, rig);
  });

  it.each([
    { name: 'none', choice: 'none', round1: 'none' },
    { name: '{tool: lookup}', choice: { tool: 'lookup' }, round1: 'auto' },
    { name: 'required', choice: 'required', round1: 'auto' },
  ])('the forced round outranks mode.toolChoice $name', async ({ choice, round1 }) => {
    const rig = await start();
    const client = await openSession(rig, { tool_choice: choice });
    await voicedAsk(rig, client, { id: 'ask-o', prompt: 'Yes or no?', options: ['yes', 'no'] });
    const turn = await decide(rig, client, 'yes', { interaction_id: 'ask-o', action: 'resolve', choice: 'yes' });
    expect(turn.r0.toolChoice).toEqual(FORCED);
    expect(turn.r1.toolChoice ?? 'none').toEqual(round1);
    finish(client, rig);
  });

  it('before anything was voiced nothing is forced or offered (a queued ask, and the narration turn itself)', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    await busyFloor(rig, client);
    raise(client, 'call_job', { id: 'ask-nv', prompt: 'Question?' });
    await narration(client, 'queued', 'ask-nv');
    const body = await plainTurn(rig, client, 'something else');
    expect(body.toolChoice).toBe('auto');
    expect(toolNames(body)).not.toContain('interaction_transition');
    // A voiced ask: its own narration turn is not a user turn and is not forced.
    raise(client, 'call_job', { id: 'ask-nv2', prompt: 'Again?' });
    await done(client, await narrationTurn(client, await narration(client, 'started', 'ask-nv2')));
    const narrationBody = requests(rig).at(-1)!;
    expect(narrationBody.toolChoice).toBe('auto');
    expect(toolNames(narrationBody)).not.toContain('interaction_transition');
    finish(client, rig);
  });

  it('an invalid choice is rejected and the question stays open', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, { id: 'ask-bad', prompt: 'Small or large?', options: ['small', 'large'] });
    const turn = await decide(rig, client, 'medium', { interaction_id: 'ask-bad', action: 'resolve', choice: 'medium' });
    expect(turn.result).toMatchObject({ outcome: 'failed', content: { rejected: true, reason: 'invalid_choice' } });
    expect((await plainTurn(rig, client, 'hmm')).toolChoice).toEqual(FORCED);
    finish(client, rig);
  });

  it('supersede settles it in the conversation only: no narration state, the host may still close it', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, { id: 'ask-sup', prompt: 'Question?', options: ['a', 'b'] });
    const turn = await decide(rig, client, 'let us talk about something else', { interaction_id: 'ask-sup', action: 'supersede' });
    expect(turn.result).toMatchObject({ outcome: 'succeeded', content: { action: 'supersede' } });
    expect((await plainTurn(rig, client, 'ok')).toolChoice).toBe('auto');
    expect(statesOf(client, 'ask-sup')).toEqual(['started']);
    expect(await update(client, 'call_job', 'ask-sup', 'superseded')).toMatchObject({ applied: true });
    expect(statesOf(client, 'ask-sup')).toEqual(['started', 'superseded']);
    finish(client, rig);
  });

  it('cancel cancels the call behind the ask: server tool_cancel, narration cancelled, decision closed', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, { id: 'ask-can', prompt: 'Question?', options: ['a', 'b'] });
    const turn = await decide(rig, client, 'never mind', { interaction_id: 'ask-can', action: 'cancel' });
    expect(turn.result).toMatchObject({ outcome: 'succeeded', content: { action: 'cancel' } });
    expect(client.all('tool_cancel').map((f) => f.id)).toContain('call_job');
    expect(statesOf(client, 'ask-can')).toEqual(['started', 'cancelled']);
    expect(await update(client, 'call_job', 'ask-can', 'resolved')).toMatchObject({ applied: false, reason: 'already_closed' });
    expect((await plainTurn(rig, client, 'ok')).toolChoice).toBe('auto');
    finish(client, rig);
  });
});

describe('resolver bindings', () => {
  const binding = { tool: 'confirm', args: { booking: 'B1' }, option_args: { large: { size: 'L' }, small: { size: 'S' } } };

  it('resolve runs the bound tool through tool_call with args plus option_args[choice]; success settles the decision', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, { id: 'ask-b', prompt: 'Small or large?', options: ['small', 'large'], resolver: binding });
    let bound: { id: string; name: string; args: Record<string, unknown> } | undefined;
    const turn = await decide(rig, client, 'large please', { interaction_id: 'ask-b', action: 'resolve', choice: 'large' }, async () => {
      bound = await answer(client, 'confirm', { content: 'confirmed L', outcome: 'succeeded', verified: true });
    });
    expect(bound!.args).toEqual({ booking: 'B1', size: 'L' });
    expect(turn.result).toMatchObject({
      outcome: 'succeeded', verified: true,
      content: { interaction_id: 'ask-b', choice: 'large', status: 'resolved', resolver: { tool: 'confirm', call_id: bound!.id, outcome: 'succeeded', content: 'confirmed L' } },
    });
    expect((await plainTurn(rig, client, 'great')).toolChoice).toBe('auto');
    // The host then ends the call that asked: the narration is resolved.
    client.send({ type: 'tool_result', id: 'call_job', content: 'booked', outcome: 'succeeded', verified: true });
    await narration(client, 'resolved', 'ask-b');
    finish(client, rig);
  });

  it('a free-text binding puts the answer in answer_arg', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, { id: 'ask-ft', prompt: 'Name for the booking?', resolver: { tool: 'confirm', args: { booking: 'B2' }, answer_arg: 'name' } });
    let bound: { args: Record<string, unknown> } | undefined;
    const turn = await decide(rig, client, 'Ada Lovelace', { interaction_id: 'ask-ft', action: 'resolve', answer: 'Ada Lovelace' }, async () => {
      bound = await answer(client, 'confirm', { content: 'ok', outcome: 'succeeded', verified: true });
    });
    expect(bound!.args).toEqual({ booking: 'B2', name: 'Ada Lovelace' });
    expect(turn.result).toMatchObject({ outcome: 'succeeded', content: { answer: 'Ada Lovelace', status: 'resolved' } });
    finish(client, rig);
  });

  it('missing_answer: a resolve without an answer on a free-text ask is rejected; nothing runs and the question stays open', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, { id: 'ask-ma', prompt: 'Name?', resolver: { tool: 'confirm', answer_arg: 'name' } });
    const turn = await decide(rig, client, 'uh', { interaction_id: 'ask-ma', action: 'resolve' });
    expect(turn.result).toMatchObject({ outcome: 'failed', verified: false, content: { interaction_id: 'ask-ma', rejected: true, reason: 'missing_answer' } });
    expect(client.all('tool_call').filter((f) => f.name === 'confirm')).toEqual([]);
    expect((await plainTurn(rig, client, 'hmm')).toolChoice).toEqual(FORCED);
    finish(client, rig);
  });

  it('a failed resolver keeps the ask open and retryable; a retry that succeeds settles it', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, { id: 'ask-fr', prompt: 'Small or large?', options: ['small', 'large'], resolver: binding });
    const failedTurn = await decide(rig, client, 'small', { interaction_id: 'ask-fr', action: 'resolve', choice: 'small' }, async () => {
      await answer(client, 'confirm', { content: 'out of stock', outcome: 'failed' });
    });
    expect(failedTurn.result).toMatchObject({ outcome: 'failed', content: { status: 'still open', retryable: true, resolver: { outcome: 'failed' } } });
    const after = client.frames.length;
    const retry = await decide(rig, client, 'then large', { interaction_id: 'ask-fr', action: 'resolve', choice: 'large' }, async () => {
      await answer(client, 'confirm', { content: 'ok', outcome: 'succeeded', verified: true }, after);
    });
    expect(retry.r0.toolChoice).toEqual(FORCED);
    expect(retry.result).toMatchObject({ outcome: 'succeeded', content: { status: 'resolved', choice: 'large' } });
    expect((await plainTurn(rig, client, 'good')).toolChoice).toBe('auto');
    finish(client, rig);
  });

  it('a timed-out resolver keeps the ask open and retryable', async () => {
    const rig = await start();
    const client = await openSession(rig, { tools: [book, lookup, slowConfirm] });
    await voicedAsk(rig, client, { id: 'ask-tr', prompt: 'Small or large?', options: ['small', 'large'], resolver: { tool: 'confirm_slow' } });
    const turn = await decide(rig, client, 'small', { interaction_id: 'ask-tr', action: 'resolve', choice: 'small' }, async () => {
      const call = await client.waitFor('tool_call', (f) => f.name === 'confirm_slow', WAIT_MS);
      await client.waitFor('tool_cancel', (f) => f.id === call.id, WAIT_MS);
    });
    expect(turn.result).toMatchObject({ outcome: 'failed', content: { status: 'still open', retryable: true, resolver: { outcome: 'timed_out' } } });
    expect((await plainTurn(rig, client, 'hmm')).toolChoice).toEqual(FORCED);
    finish(client, rig);
  });

  it('a binding to an unknown tool is dropped while the ask stands: resolve runs nothing and records the decision', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, { id: 'ask-unk', prompt: 'Small or large?', options: ['small', 'large'], resolver: { tool: 'no_such_tool' } });
    expect(client.all('error')).toEqual([]);
    const turn = await decide(rig, client, 'small', { interaction_id: 'ask-unk', action: 'resolve', choice: 'small' });
    expect(turn.result).toMatchObject({ outcome: 'succeeded', verified: false, content: { choice: 'small' } });
    expect(client.all('tool_call').filter((f) => f.name === 'no_such_tool')).toEqual([]);
    finish(client, rig);
  });

  it('a binding to a requires_permission tool is dropped while the ask stands', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, { id: 'ask-perm', prompt: 'Small or large?', options: ['small'], resolver: { tool: guarded.name } });
    await decide(rig, client, 'small', { interaction_id: 'ask-perm', action: 'resolve', choice: 'small' });
    expect(client.all('permission_pending')).toEqual([]);
    expect(client.all('tool_call').filter((f) => f.name === guarded.name)).toEqual([]);
    finish(client, rig);
  });

  it.each([
    { name: 'its tool vanished', tools: [book, lookup] },
    { name: 'its tool became requires_permission', tools: [book, lookup, { ...confirm, requires_permission: true }] },
  ])('set_tools re-validates open bindings: dropped when $name', async ({ tools }) => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, { id: 'ask-st', prompt: 'Small or large?', options: ['small', 'large'], resolver: binding });
    client.send({ type: 'set_tools', tools });
    await barrier(client);
    const turn = await decide(rig, client, 'large', { interaction_id: 'ask-st', action: 'resolve', choice: 'large' });
    expect(turn.result).toMatchObject({ outcome: 'succeeded', verified: false, content: { choice: 'large' } });
    expect(client.all('tool_call').filter((f) => f.name === 'confirm')).toEqual([]);
    expect(client.all('permission_pending')).toEqual([]);
    // The binding stays dropped even if the tool comes back.
    client.send({ type: 'set_tools', tools: [book, lookup, confirm] });
    await barrier(client);
    await passTime(20);
    finish(client, rig);
  });
});
