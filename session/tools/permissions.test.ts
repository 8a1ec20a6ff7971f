import { describe, expect, it } from 'vitest';
import { useFakeClock } from '../testing/test-session.ts';
import type { TestSession } from '../testing/test-session.ts';
import {
  ask,
  done,
  finish,
  open,
  pos,
  request,
  requests,
  passTime,
  toolCallFrame,
  toolResult,
  transfer,
  useRigs,
  WAIT_MS,
  type Rig,
} from '../testing/tool-kit.ts';

/**
 * requires_permission tools (SPEC "Permission", permission_* events, confirm_tool_permission):
 * the call is held until the user approves; a refusal, an expiry or a typed no means it never
 * runs, and the model is told it was cancelled.
 */

const start = useRigs();
useFakeClock();

/** The model calls `transfer` (requires_permission); resolves with the pending frame. */
async function held(rig: Rig): Promise<{ client: TestSession; turnId: string; pending: Extract<TestSession['frames'][number], { type: 'permission_pending' }> }> {
  rig.fake.enqueue({ toolCalls: [{ id: 'call_pay', name: 'transfer', args: { amount: 25, to: 'Sam' } }] }, { text: 'Final answer.' });
  const client = await open(rig, { tools: [transfer] });
  const { turnId } = await ask(client, 'send Sam 25');
  const pending = await client.waitFor('permission_pending', () => true, WAIT_MS);
  return { client, turnId, pending };
}

/** Waits until the server handled everything sent so far (an unknown approval is answered with an error). */
async function barrier(client: TestSession): Promise<void> {
  const after = client.frames.length;
  client.send({ type: 'confirm_tool_permission', approval_id: 'appr_barrier_unknown', approved: true });
  await client.waitFor('error', (f) => f.code === 'unknown_approval', WAIT_MS, after);
}

describe('permission flow', () => {
  it('pending {id, tool, arguments} and no tool_call; approval → permission_approved, then tool_call', async () => {
    const rig = await start();
    const { client, turnId, pending } = await held(rig);
    expect(pending).toEqual({ type: 'permission_pending', id: expect.any(String), tool: 'transfer', arguments: { amount: 25, to: 'Sam' } });
    await barrier(client);
    await passTime(100);
    expect(client.all('tool_call')).toEqual([]);
    expect(requests(rig)).toHaveLength(1);

    client.send({ type: 'confirm_tool_permission', approval_id: pending.id, approved: true });
    const approved = await client.waitFor('permission_approved', () => true, WAIT_MS);
    expect(approved).toEqual({ type: 'permission_approved', id: pending.id, tool: 'transfer' });
    const call = await toolCallFrame(client, 'call_pay');
    expect(call).toEqual({ type: 'tool_call', id: 'call_pay', name: 'transfer', args: { amount: 25, to: 'Sam' } });
    expect(pos(client, approved)).toBeLessThan(pos(client, call));

    client.send({ type: 'tool_result', id: 'call_pay', content: 'sent', outcome: 'succeeded', verified: true });
    expect((await done(client, turnId)).status).toBe('completed');
    expect(toolResult(request(rig, 1), 'call_pay')).toEqual({ outcome: 'succeeded', verified: true, content: 'sent' });
    expect(client.all('permission_refused')).toEqual([]);
    finish(client, rig);
  });

  it('approved:false → permission_refused, no tool_call ever, the model is told cancelled', async () => {
    const rig = await start();
    const { client, turnId, pending } = await held(rig);
    client.send({ type: 'confirm_tool_permission', approval_id: pending.id, approved: false });
    const refused = await client.waitFor('permission_refused', () => true, WAIT_MS);
    expect(refused).toEqual({ type: 'permission_refused', id: pending.id, tool: 'transfer' });
    expect((await done(client, turnId)).status).toBe('completed');
    expect(toolResult(request(rig, 1), 'call_pay')).toMatchObject({ outcome: 'cancelled', verified: false });
    // A late approval of the same hold changes nothing.
    const after = client.frames.length;
    client.send({ type: 'confirm_tool_permission', approval_id: pending.id, approved: true });
    expect(await client.waitFor('error', () => true, WAIT_MS, after)).toMatchObject({ code: 'unknown_approval', retryable: false });
    await passTime(100);
    expect(client.all('tool_call')).toEqual([]);
    expect(client.all('permission_approved')).toEqual([]);
    finish(client, rig);
  });

  it('a hold that is not answered expires (PERMISSION_TIMEOUT_S) → permission_refused; the tool never runs', async () => {
    const rig = await start({ tools: { permissionTimeoutMs: 1000 } });
    const { client, turnId, pending } = await held(rig);
    const refused = await client.waitFor('permission_refused', () => true, WAIT_MS);
    expect(refused).toEqual({ type: 'permission_refused', id: pending.id, tool: 'transfer' });
    expect((await done(client, turnId)).status).toBe('completed');
    expect(toolResult(request(rig, 1), 'call_pay')).toMatchObject({ outcome: 'cancelled', verified: false });
    expect(client.all('tool_call')).toEqual([]);
    finish(client, rig);
  });

  it("a typed 'yes' while a hold is pending approves it; no turn is started for the 'yes'", async () => {
    const rig = await start();
    const { client, turnId, pending } = await held(rig);
    client.send({ type: 'input_text', text: 'yes, go ahead' });
    const approved = await client.waitFor('permission_approved', () => true, WAIT_MS);
    expect(approved.id).toBe(pending.id);
    await toolCallFrame(client, 'call_pay');
    const asr = await client.waitFor('asr', (f) => f.text === 'yes, go ahead', WAIT_MS);
    expect(asr.turn_id).toBeUndefined();
    client.send({ type: 'tool_result', id: 'call_pay', content: 'sent', outcome: 'succeeded', verified: true });
    expect((await done(client, turnId)).status).toBe('completed');
    expect(client.all('turn')).toHaveLength(1);
    expect(client.all('interrupted')).toEqual([]);
    expect(requests(rig)).toHaveLength(2);
    expect(toolResult(request(rig, 1), 'call_pay')).toEqual({ outcome: 'succeeded', verified: true, content: 'sent' });
    finish(client, rig);
  });

  it("a typed 'no' refuses; the model is told cancelled; no tool_call", async () => {
    const rig = await start();
    const { client, turnId, pending } = await held(rig);
    client.send({ type: 'input_text', text: 'no' });
    const refused = await client.waitFor('permission_refused', () => true, WAIT_MS);
    expect(refused.id).toBe(pending.id);
    expect((await done(client, turnId)).status).toBe('completed');
    expect(client.all('turn')).toHaveLength(1);
    expect(client.all('tool_call')).toEqual([]);
    expect(toolResult(request(rig, 1), 'call_pay')).toMatchObject({ outcome: 'cancelled', verified: false });
    finish(client, rig);
  });

  it('an unrelated typed turn while a hold is pending takes the floor and the hold is refused', async () => {
    const rig = await start();
    const { client, turnId, pending } = await held(rig);
    const next = await ask(client, 'what is the weather like');
    expect((await done(client, turnId)).status).toBe('interrupted');
    const refused = await client.waitFor('permission_refused', () => true, WAIT_MS);
    expect(refused.id).toBe(pending.id);
    expect((await done(client, next.turnId)).status).toBe('completed');
    expect(client.all('tool_call')).toEqual([]);
    finish(client, rig);
  });

  it('an unknown approval id → error unknown_approval', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [transfer] });
    client.send({ type: 'confirm_tool_permission', approval_id: 'appr_nope', approved: true });
    const error = await client.waitFor('error', () => true, WAIT_MS);
    expect(error).toMatchObject({ code: 'unknown_approval', retryable: false, detail: expect.any(String) });
    finish(client, rig);
  });
});
