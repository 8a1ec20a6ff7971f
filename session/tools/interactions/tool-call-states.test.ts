import { describe, expect, it } from 'vitest';
import { useFakeClock } from '../../testing/test-session.ts';
import { ask, done, finish, open, resume, toolCallFrame, WAIT_MS } from '../../testing/tool-kit.ts';
import { barrier, book, busyFloor, deferredJob, narration, narrationTurn, openSession, raise, statesOf, update, useInteractionRigs } from '../../testing/interaction-kit.ts';

/**
 * SPEC "Tool call" state table, row by row, for the call behind an interaction (the other state
 * table interactions live on): an ask never resolves its call, and every way the call ends is
 * what closes the ask.
 */

const start = useInteractionRigs();
useFakeClock();

describe('Tool call table, for a call that raised an interaction', () => {
  it('(none) → open: the server sends tool_call; an ask can be raised on the open call', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await busyFloor(rig, client, 'call_open');
    raise(client, 'call_open', { id: 'tc-open', prompt: 'Question?' });
    await narration(client, 'started', 'tc-open');
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });

  it('open → open: tool_partial_result with an interaction never resolves the call; its tool_result still does', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await busyFloor(rig, client, 'call_oo');
    raise(client, 'call_oo', { id: 'tc-oo', prompt: 'Question?' });
    await done(client, await narrationTurn(client, await narration(client, 'started', 'tc-oo')));
    client.send({ type: 'tool_progress', id: 'call_oo', note: 'still working' });
    await barrier(client);
    client.send({ type: 'tool_result', id: 'call_oo', content: 'RESULT-OO', outcome: 'succeeded', verified: true });
    await narration(client, 'resolved', 'tc-oo');
    expect(client.all('error').filter((e) => e.code === 'unknown_tool_call')).toHaveLength(1); // the barrier's only
    finish(client, rig);
  });

  it('open → resolved: tool_result resolves the call and its ask', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await busyFloor(rig, client, 'call_or');
    raise(client, 'call_or', { id: 'tc-or', prompt: 'Question?' });
    await narration(client, 'started', 'tc-or');
    client.send({ type: 'tool_result', id: 'call_or', content: 'ok', outcome: 'succeeded' });
    await narration(client, 'resolved', 'tc-or');
    expect(await update(client, 'call_or', 'tc-or', 'resolved')).toMatchObject({ applied: false, reason: 'already_closed' });
    finish(client, rig);
  });

  it('open → deferred: an open call with an ask is deferred; the ask keeps its job id (the call id) and stays open', async () => {
    const rig = await start();
    const client = await openSession(rig);
    rig.fake.enqueue({ toolCalls: [{ id: 'call_od', name: 'book', args: {} }] });
    const { turnId } = await ask(client, 'book it');
    await toolCallFrame(client, 'call_od');
    raise(client, 'call_od', { id: 'tc-od', prompt: 'Question?' });
    const started = await narration(client, 'started', 'tc-od');
    expect(started.job_ids).toEqual(['call_od']);
    await done(client, turnId);
    await done(client, await narrationTurn(client, started));
    client.send({ type: 'tool_deferred', id: 'call_od', handle: 'h-od' });
    expect(await client.waitFor('tool_deferred_ack', () => true, WAIT_MS)).toMatchObject({ accepted: true });
    expect(await update(client, 'h-od', 'tc-od', 'resolved')).toMatchObject({ id: 'call_od', applied: true });
    const resolved = client.all('tool_job_narration').at(-1)!;
    expect(resolved).toMatchObject({ state: 'resolved', job_ids: ['call_od'], interaction_ids: ['tc-od'] });
    finish(client, rig);
  });

  it('open → cancelled: tool_cancel from the client cancels the call and its ask', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await busyFloor(rig, client, 'call_oc');
    raise(client, 'call_oc', { id: 'tc-oc', prompt: 'Question?' });
    await narration(client, 'started', 'tc-oc');
    client.send({ type: 'tool_cancel', id: 'call_oc' });
    await narration(client, 'cancelled', 'tc-oc');
    finish(client, rig);
  });

  it('open → cancelled: tool_cancel from the server (timeout) cancels the call and its ask', async () => {
    const rig = await start({}, { tools: { defaultTimeoutMs: 500 } });
    const client = await openSession(rig);
    await busyFloor(rig, client, 'call_os');
    raise(client, 'call_os', { id: 'tc-os', prompt: 'Question?' });
    await narration(client, 'started', 'tc-os');
    await client.waitFor('tool_cancel', (f) => f.id === 'call_os', WAIT_MS);
    await narration(client, 'cancelled', 'tc-os');
    finish(client, rig);
  });

  it('deferred → deferred: after a resume the job is re-associated (tool_deferred_resume) but its ask is gone', async () => {
    const rig = await start();
    const first = { client: await open(rig, { tools: [book] }) };
    const jobId = await deferredJob(rig, first.client);
    raise(first.client, 'call_job', { id: 'tc-dd', prompt: 'Question?' });
    await narration(first.client, 'started', 'tc-dd');
    const again = { client: await resume(rig, await first.client.drop()) };
    const resumed = await again.client.waitFor('tool_deferred_resume', () => true, WAIT_MS);
    expect(resumed).toMatchObject({ id: 'call_job', handle: 'h-call_job', job_id: jobId });
    expect(await update(again.client, 'h-call_job', 'tc-dd', 'cancelled')).toMatchObject({ id: 'call_job', applied: false, reason: 'unknown_interaction' });
    // The job's result is still reported; no narration state for the forgotten ask.
    again.client.send({ type: 'tool_result', id: 'call_job', content: 'done', outcome: 'succeeded' });
    await barrier(again.client);
    expect(statesOf(again.client, 'tc-dd')).toEqual([]);
    finish(again.client, rig);
  });
});
