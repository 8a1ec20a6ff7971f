import type { FakeReply } from '../../testing/fake-llm.ts';
import { describe, expect, it } from 'vitest';
import { useFakeClock } from '../../testing/test-session.ts';
import { ask, done, finish, mentions, pos, requests, passTime, toolResult, utteranceOf, WAIT_MS, type RecordedRequest } from '../../testing/tool-kit.ts';
import {
  barrier,
  busyFloor,
  deferredJob,
  isNarration,
  narration,
  narrationRequests,
  narrationTurn,
  openSession,
  raise,
  realErrors,
  statesOf,
  update,
  useInteractionRigs,
} from '../../testing/interaction-kit.ts';

/**
 * SPEC "Interaction narration states": one test per row (and per trigger of a row), against the
 * real server with the scripted fake model. In text sessions "heard" means a text_delta of the
 * narration turn was sent; the barge rows are in voice-narration.test.ts.
 */

const start = useInteractionRigs();
useFakeClock();

describe('(none) → queued | started', () => {
  it('(none) → queued: tool_partial_result with interaction while the floor is busy; never dropped', async () => {
    const rig = await start();
    const client = await openSession(rig);
    const jobId = await deferredJob(rig, client);
    await busyFloor(rig, client);
    raise(client, 'call_job', { id: 'ask-q', prompt: 'Which time suits you?', options: ['7pm', '8pm'] });
    const queued = await narration(client, 'queued', 'ask-q');
    expect(queued).toEqual({ type: 'tool_job_narration', state: 'queued', job_ids: [jobId], interaction_ids: ['ask-q'], kind: 'interaction' });
    await barrier(client);
    await passTime(100);
    expect(statesOf(client, 'ask-q')).toEqual(['queued']);
    expect(narrationRequests(rig)).toEqual([]);
    expect(realErrors(client)).toEqual([]);
    finish(client, rig);
  });

  it('(none) → started: on a free floor the ask is voiced at once (no queued)', async () => {
    const rig = await start();
    const client = await openSession(rig);
    const jobId = await deferredJob(rig, client);
    raise(client, 'call_job', { id: 'ask-free', prompt: 'Indoors or outdoors?', options: ['indoors', 'outdoors'] });
    const started = await narration(client, 'started', 'ask-free');
    expect(started).toEqual({ type: 'tool_job_narration', state: 'started', job_ids: [jobId], interaction_ids: ['ask-free'], kind: 'interaction' });
    const turnId = await narrationTurn(client, started);
    expect((await done(client, turnId)).status).toBe('completed');
    expect(utteranceOf(client, turnId)).toBe('Quick question for you.');
    expect(statesOf(client, 'ask-free')).toEqual(['started']);
    const body = narrationRequests(rig)[0]!;
    expect(mentions(body, 'Indoors or outdoors?')).toBe(true);
    expect(mentions(body, 'indoors; outdoors')).toBe(true);
    finish(client, rig);
  });

  it('(none) → started: an ask whose own blocked turn holds the floor makes that turn yield and is voiced at once', async () => {
    const rig = await start();
    const client = await openSession(rig);
    const busy = await busyFloor(rig, client, 'call_own');
    raise(client, 'call_own', { id: 'ask-own', prompt: 'Which city?', options: ['Paris', 'Rome'] });
    const started = await narration(client, 'started', 'ask-own');
    const yielded = await done(client, busy);
    expect(yielded.status).toBe('completed');
    expect(pos(client, yielded)).toBeLessThan(pos(client, started));
    expect(started).toMatchObject({ job_ids: ['call_own'], interaction_ids: ['ask-own'] });
    expect(statesOf(client, 'ask-own')).toEqual(['started']);
    const turnId = await narrationTurn(client, started);
    await done(client, turnId);
    // The yielded turn's call is answered "still running", not "the user interrupted".
    const told = toolResult(narrationRequests(rig)[0]!, 'call_own');
    expect(told).toMatchObject({ outcome: 'unknown', verified: false });
    expect(String(told?.content)).toContain('asked the user a question');
    // The call is still open: its terminal result resolves the ask.
    const after = client.frames.length;
    client.send({ type: 'tool_result', id: 'call_own', content: 'Paris booked', outcome: 'succeeded', verified: true });
    await narration(client, 'resolved', 'ask-own', after);
    expect(realErrors(client)).toEqual([]);
    finish(client, rig);
  });
});

describe('queued → started', () => {
  it('queued → started: delivery when the floor is claimed (started before the narration turn)', async () => {
    const rig = await start();
    const client = await openSession(rig);
    const jobId = await deferredJob(rig, client);
    const busy = await busyFloor(rig, client);
    raise(client, 'call_job', { id: 'ask-d', prompt: 'Window seat?', options: ['yes', 'no'] });
    await narration(client, 'queued', 'ask-d');
    client.send({ type: 'tool_result', id: 'call_busy', content: 'found', outcome: 'succeeded', verified: true });
    const started = await narration(client, 'started', 'ask-d');
    const busyDone = await done(client, busy);
    expect(pos(client, busyDone)).toBeLessThan(pos(client, started));
    expect(started).toEqual({ type: 'tool_job_narration', state: 'started', job_ids: [jobId], interaction_ids: ['ask-d'], kind: 'interaction' });
    const turnId = await narrationTurn(client, started);
    expect(client.all('turn').find((t) => t.turn_id === turnId)).toBeDefined();
    expect(pos(client, started)).toBeLessThan(pos(client, client.all('turn').find((t) => t.turn_id === turnId)));
    await done(client, turnId);
    expect(statesOf(client, 'ask-d')).toEqual(['queued', 'started']);
    expect(narrationRequests(rig)).toHaveLength(1);
    finish(client, rig);
  });

  it('queued → started: several pending interactions are coalesced into one turn, one started ack listing several ids', async () => {
    const rig = await start();
    const client = await openSession(rig);
    const job1 = await deferredJob(rig, client, 'call_j1');
    const job2 = await deferredJob(rig, client, 'call_j2');
    await busyFloor(rig, client);
    raise(client, 'call_j1', { id: 'ask-c1', prompt: 'First question?', options: ['a', 'b'] });
    raise(client, 'call_j2', { id: 'ask-c2', prompt: 'Second question?' });
    await narration(client, 'queued', 'ask-c1');
    await narration(client, 'queued', 'ask-c2');
    client.send({ type: 'tool_result', id: 'call_busy', content: 'found', outcome: 'succeeded' });
    const started = await narration(client, 'started', 'ask-c1');
    expect(started).toEqual({ type: 'tool_job_narration', state: 'started', job_ids: [job1, job2], interaction_ids: ['ask-c1', 'ask-c2'], kind: 'interaction' });
    await done(client, await narrationTurn(client, started));
    expect(client.all('tool_job_narration').filter((f) => f.state === 'started')).toHaveLength(1);
    const bodies = narrationRequests(rig);
    expect(bodies).toHaveLength(1);
    expect(mentions(bodies[0]!, 'First question?') && mentions(bodies[0]!, 'Second question?')).toBe(true);
    finish(client, rig);
  });
});

describe('→ superseded', () => {
  it('queued → superseded: a real user turn before anything was heard; the decision stays open and a fresh interaction may be raised', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    await busyFloor(rig, client);
    raise(client, 'call_job', { id: 'ask-u1', prompt: 'Which day?', options: ['Friday', 'Saturday'] });
    await narration(client, 'queued', 'ask-u1');
    const { turnId } = await ask(client, 'actually, tell me a joke');
    const superseded = await narration(client, 'superseded', 'ask-u1');
    await done(client, turnId);
    expect(superseded.interaction_ids).toEqual(['ask-u1']);
    expect(statesOf(client, 'ask-u1')).toEqual(['queued', 'superseded']);
    expect(narrationRequests(rig)).toEqual([]);
    // Not a close: the user's turn is not forced (nothing was voiced) and the id is spent.
    const userRound = (requests(rig) as RecordedRequest[]).filter((b) => !isNarration(b)).at(-1)!;
    expect(userRound.toolChoice).toBe('auto');
    // A fresh interaction may be raised (a fresh id: ids are single-use).
    raise(client, 'call_job', { id: 'ask-u2', prompt: 'Which day, again?', options: ['Friday', 'Saturday'] });
    const again = await narration(client, 'started', 'ask-u2');
    await done(client, await narrationTurn(client, again));
    expect(statesOf(client, 'ask-u1')).toEqual(['queued', 'superseded']);
    expect(realErrors(client)).toEqual([]);
    finish(client, rig);
  });

  it('a user turn that supersedes the narration does not close the decision: a later update still applies', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    await busyFloor(rig, client);
    raise(client, 'call_job', { id: 'ask-open', prompt: 'Which day?', options: ['Friday', 'Saturday'] });
    await narration(client, 'queued', 'ask-open');
    const { turnId } = await ask(client, 'something else');
    await narration(client, 'superseded', 'ask-open');
    await done(client, turnId);
    const ack = await update(client, 'h-call_job', 'ask-open', 'resolved');
    expect(ack).toEqual({ type: 'tool_interaction_update_ack', id: 'call_job', interaction_id: 'ask-open', state: 'resolved', applied: true, reason: null });
    // The narration already ended (superseded): no second narration state is reported.
    expect(statesOf(client, 'ask-open')).toEqual(['queued', 'superseded']);
    finish(client, rig);
  });

  it('started → superseded: a real user turn before anything of the narration was heard (no text_delta)', async () => {
    const rig = await start();
    rig.fake.script((body: RecordedRequest) => (isNarration(body) ? { hang: true } : { text: 'ok' }));
    const client = await openSession(rig);
    await deferredJob(rig, client);
    raise(client, 'call_job', { id: 'ask-s', prompt: 'Red or white?', options: ['red', 'white'] });
    const started = await narration(client, 'started', 'ask-s');
    const narrationId = await narrationTurn(client, started);
    await rig.fake.waitRequest(isNarration);
    const { turnId } = await ask(client, 'wait, one more thing');
    await narration(client, 'superseded', 'ask-s');
    expect((await done(client, narrationId)).status).toBe('interrupted');
    await done(client, turnId);
    expect(client.all('text_delta').filter((f) => f.turn_id === narrationId)).toEqual([]);
    expect(statesOf(client, 'ask-s')).toEqual(['started', 'superseded']);
    finish(client, rig);
  });

  it('a user turn after part of the narration was heard does not supersede it: it stays started', async () => {
    const rig = await start();
    rig.fake.delayMs = 0;
    rig.fake.script((body: RecordedRequest) => (isNarration(body) ? narrationStream() : { text: 'ok' }));
    const client = await openSession(rig);
    await deferredJob(rig, client);
    raise(client, 'call_job', { id: 'ask-h', prompt: 'Red or white?', options: ['red', 'white'] });
    const started = await narration(client, 'started', 'ask-h');
    const narrationId = await narrationTurn(client, started);
    await client.waitFor('text_delta', (f) => f.turn_id === narrationId, WAIT_MS);
    const { turnId } = await ask(client, 'red please');
    expect((await done(client, narrationId)).status).toBe('interrupted');
    await done(client, turnId);
    await barrier(client);
    expect(statesOf(client, 'ask-h')).toEqual(['started']);
    finish(client, rig);
  });

  it('queued → superseded: a newer interaction on the same call', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    await busyFloor(rig, client);
    raise(client, 'call_job', { id: 'ask-old', prompt: 'Old question?' });
    await narration(client, 'queued', 'ask-old');
    raise(client, 'call_job', { id: 'ask-new', prompt: 'New question?' });
    await narration(client, 'superseded', 'ask-old');
    await narration(client, 'queued', 'ask-new');
    client.send({ type: 'tool_result', id: 'call_busy', content: 'found', outcome: 'succeeded' });
    const started = await narration(client, 'started', 'ask-new');
    expect(started.interaction_ids).toEqual(['ask-new']);
    await done(client, await narrationTurn(client, started));
    expect(statesOf(client, 'ask-old')).toEqual(['queued', 'superseded']);
    expect(mentions(narrationRequests(rig)[0]!, 'Old question?')).toBe(true); // in the context, as history
    expect(narrationRequests(rig)[0]!.messages.at(-1)!.content).not.toContain('Old question?');
    finish(client, rig);
  });

  it('started → superseded: a newer interaction on the same call; the narration speaking the old one stops', async () => {
    const rig = await start();
    let n = 0;
    rig.fake.script((body: RecordedRequest) => (isNarration(body) ? ((n += 1) === 1 ? { hang: true } : { text: 'The new question.' }) : { text: 'ok' }));
    const client = await openSession(rig);
    await deferredJob(rig, client);
    raise(client, 'call_job', { id: 'ask-o', prompt: 'Old question?' });
    const first = await narration(client, 'started', 'ask-o');
    const firstTurn = await narrationTurn(client, first);
    await rig.fake.waitRequest(isNarration);
    const after = client.frames.length;
    raise(client, 'call_job', { id: 'ask-n', prompt: 'New question?' });
    await narration(client, 'superseded', 'ask-o', after);
    expect((await done(client, firstTurn)).status).toBe('interrupted');
    const second = await narration(client, 'started', 'ask-n', after);
    expect(second.interaction_ids).toEqual(['ask-n']);
    await done(client, await narrationTurn(client, second));
    expect(statesOf(client, 'ask-o')).toEqual(['started', 'superseded']);
    finish(client, rig);
  });

  it('queued → superseded: tool_interaction_update state=superseded', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    await busyFloor(rig, client);
    raise(client, 'call_job', { id: 'ask-us', prompt: 'Question?' });
    await narration(client, 'queued', 'ask-us');
    const ack = await update(client, 'call_job', 'ask-us', 'superseded');
    expect(ack).toMatchObject({ applied: true, reason: null });
    expect(statesOf(client, 'ask-us')).toEqual(['queued', 'superseded']);
    client.send({ type: 'tool_result', id: 'call_busy', content: 'found', outcome: 'succeeded' });
    await passTime(200);
    expect(narrationRequests(rig)).toEqual([]);
    finish(client, rig);
  });

  it('started → superseded: tool_interaction_update state=superseded', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    raise(client, 'call_job', { id: 'ask-us2', prompt: 'Question?' });
    await done(client, await narrationTurn(client, await narration(client, 'started', 'ask-us2')));
    const ack = await update(client, 'h-call_job', 'ask-us2', 'superseded');
    expect(ack).toMatchObject({ applied: true, reason: null });
    expect(statesOf(client, 'ask-us2')).toEqual(['started', 'superseded']);
    finish(client, rig);
  });
});

describe('→ cancelled', () => {
  it('queued → cancelled: cancel_pending_job', async () => {
    const rig = await start();
    const client = await openSession(rig);
    const jobId = await deferredJob(rig, client);
    const busy = await busyFloor(rig, client);
    raise(client, 'call_job', { id: 'ask-cpj', prompt: 'Which table?' });
    await narration(client, 'queued', 'ask-cpj');
    // The busy turn's next round cancels the job.
    rig.fake.enqueue({ toolCalls: [{ id: 'call_cpj', name: 'cancel_pending_job', args: { job_id: jobId } }] });
    client.send({ type: 'tool_result', id: 'call_busy', content: 'found', outcome: 'succeeded' });
    const cancelled = await narration(client, 'cancelled', 'ask-cpj');
    expect(cancelled).toEqual({ type: 'tool_job_narration', state: 'cancelled', job_ids: [jobId], interaction_ids: ['ask-cpj'], kind: 'interaction' });
    expect(await client.waitFor('tool_cancel', (f) => f.id === 'call_job', WAIT_MS)).toBeDefined();
    await done(client, busy);
    await passTime(100);
    expect(statesOf(client, 'ask-cpj')).toEqual(['queued', 'cancelled']);
    expect(narrationRequests(rig)).toEqual([]);
    finish(client, rig);
  });

  it('started → cancelled: host tool_cancel of the call behind it (by its handle)', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    raise(client, 'call_job', { id: 'ask-tc', prompt: 'Question?' });
    await done(client, await narrationTurn(client, await narration(client, 'started', 'ask-tc')));
    client.send({ type: 'tool_cancel', id: 'h-call_job' });
    await narration(client, 'cancelled', 'ask-tc');
    expect(statesOf(client, 'ask-tc')).toEqual(['started', 'cancelled']);
    finish(client, rig);
  });

  it('started → cancelled: timeout of the call behind it', async () => {
    const rig = await start({}, { tools: { defaultTimeoutMs: 600 } });
    const client = await openSession(rig);
    await busyFloor(rig, client, 'call_slow');
    raise(client, 'call_slow', { id: 'ask-to', prompt: 'Question?' });
    await done(client, await narrationTurn(client, await narration(client, 'started', 'ask-to')));
    const cancelled = await narration(client, 'cancelled', 'ask-to');
    const serverCancel = await client.waitFor('tool_cancel', (f) => f.id === 'call_slow', WAIT_MS);
    expect(pos(client, serverCancel)).toBeLessThan(pos(client, cancelled));
    expect(statesOf(client, 'ask-to')).toEqual(['started', 'cancelled']);
    finish(client, rig);
  });

  it('queued → cancelled: tool_interaction_update state=cancelled; nothing is spoken', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    const busy = await busyFloor(rig, client);
    raise(client, 'call_job', { id: 'ask-uc', prompt: 'Question?' });
    await narration(client, 'queued', 'ask-uc');
    expect(await update(client, 'call_job', 'ask-uc', 'cancelled')).toMatchObject({ applied: true, reason: null, state: 'cancelled' });
    client.send({ type: 'tool_result', id: 'call_busy', content: 'found', outcome: 'succeeded' });
    await done(client, busy);
    await passTime(200);
    expect(statesOf(client, 'ask-uc')).toEqual(['queued', 'cancelled']);
    expect(narrationRequests(rig)).toEqual([]);
    finish(client, rig);
  });

  it('started → cancelled: tool_interaction_update state=cancelled', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    raise(client, 'call_job', { id: 'ask-uc2', prompt: 'Question?' });
    await done(client, await narrationTurn(client, await narration(client, 'started', 'ask-uc2')));
    expect(await update(client, 'call_job', 'ask-uc2', 'cancelled')).toMatchObject({ applied: true });
    expect(statesOf(client, 'ask-uc2')).toEqual(['started', 'cancelled']);
    finish(client, rig);
  });
});

describe('→ failed', () => {
  it('queued → failed: the queue deadline expired with the floor unclaimable (watchdog rounds); nothing spoken', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    const busy = await busyFloor(rig, client);
    raise(client, 'call_job', { id: 'ask-f', prompt: 'Question?' });
    const queued = await narration(client, 'queued', 'ask-f');
    const queuedAt = Date.now();
    const failed = await narration(client, 'failed', 'ask-f');
    // 3 rounds of 0.3 s: not before the rounds ran (a lower bound only).
    expect(Date.now() - queuedAt).toBeGreaterThanOrEqual(700);
    expect(pos(client, queued)).toBeLessThan(pos(client, failed));
    client.send({ type: 'tool_result', id: 'call_busy', content: 'found', outcome: 'succeeded' });
    await done(client, busy);
    await passTime(300);
    expect(statesOf(client, 'ask-f')).toEqual(['queued', 'failed']);
    expect(narrationRequests(rig)).toEqual([]);
    // Telemetry only: the decision is still the host's to close.
    expect(await update(client, 'call_job', 'ask-f', 'resolved')).toMatchObject({ applied: true });
    finish(client, rig);
  });

  it('started → failed: delivery retried past its bound (every narration attempt unheard); nothing spoken', async () => {
    const rig = await start();
    rig.fake.script((body: RecordedRequest) => (isNarration(body) ? { status: 500, error: 'narration backend down' } : { text: 'ok' }));
    const client = await openSession(rig);
    await deferredJob(rig, client);
    raise(client, 'call_job', { id: 'ask-b', prompt: 'Question?' });
    const first = await narration(client, 'started', 'ask-b');
    await narration(client, 'failed', 'ask-b');
    expect(statesOf(client, 'ask-b')).toEqual(['started', 'queued', 'started', 'queued', 'started', 'failed']);
    expect(narrationRequests(rig)).toHaveLength(3);
    expect(client.frames.slice(pos(client, first)).filter((f) => f.type === 'text_delta')).toEqual([]);
    expect(realErrors(client).map((e) => e.code)).toEqual(['model_error', 'model_error', 'model_error']);
    finish(client, rig);
  });
});

describe('→ resolved', () => {
  it("started → resolved: the interaction's call sends its terminal result", async () => {
    const rig = await start();
    const client = await openSession(rig);
    const jobId = await deferredJob(rig, client);
    raise(client, 'call_job', { id: 'ask-r', prompt: 'Question?' });
    await done(client, await narrationTurn(client, await narration(client, 'started', 'ask-r')));
    client.send({ type: 'tool_result', id: 'call_job', content: 'booked', outcome: 'succeeded', verified: true });
    const resolved = await narration(client, 'resolved', 'ask-r');
    expect(resolved).toEqual({ type: 'tool_job_narration', state: 'resolved', job_ids: [jobId], interaction_ids: ['ask-r'], kind: 'interaction' });
    expect(statesOf(client, 'ask-r')).toEqual(['started', 'resolved']);
    finish(client, rig);
  });

  it("queued → resolved: the interaction's call sends its terminal result while the ask waits", async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    await busyFloor(rig, client);
    raise(client, 'call_job', { id: 'ask-rq', prompt: 'Question?' });
    await narration(client, 'queued', 'ask-rq');
    client.send({ type: 'tool_result', id: 'call_job', content: 'done anyway', outcome: 'succeeded' });
    await narration(client, 'resolved', 'ask-rq');
    expect(statesOf(client, 'ask-rq')).toEqual(['queued', 'resolved']);
    finish(client, rig);
  });

  it('queued → resolved: tool_interaction_update state=resolved', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    await busyFloor(rig, client);
    raise(client, 'call_job', { id: 'ask-ur', prompt: 'Question?' });
    await narration(client, 'queued', 'ask-ur');
    expect(await update(client, 'call_job', 'ask-ur', 'resolved')).toMatchObject({ applied: true, reason: null });
    expect(statesOf(client, 'ask-ur')).toEqual(['queued', 'resolved']);
    finish(client, rig);
  });

  it('started → resolved: tool_interaction_update state=resolved', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    raise(client, 'call_job', { id: 'ask-ur2', prompt: 'Question?' });
    await done(client, await narrationTurn(client, await narration(client, 'started', 'ask-ur2')));
    expect(await update(client, 'h-call_job', 'ask-ur2', 'resolved', 'picked in the app')).toMatchObject({ applied: true });
    expect(statesOf(client, 'ask-ur2')).toEqual(['started', 'resolved']);
    finish(client, rig);
  });
});

describe('started → queued', () => {
  it('started → queued: requeue of a claimed but unheard ask, with a fresh queued ack; then started again', async () => {
    const rig = await start();
    let n = 0;
    rig.fake.script((body: RecordedRequest) => (isNarration(body) ? ((n += 1) === 1 ? { hang: true } : { text: 'Second try.' }) : { text: 'ok' }));
    const client = await openSession(rig);
    await deferredJob(rig, client);
    raise(client, 'call_job', { id: 'ask-rq2', prompt: 'Question?' });
    const first = await narration(client, 'started', 'ask-rq2');
    const firstTurn = await narrationTurn(client, first);
    await rig.fake.waitRequest(isNarration);
    // The client stops the reply (not a user turn): nothing was heard, so the ask goes back.
    client.send({ type: 'interrupt' });
    expect((await done(client, firstTurn)).status).toBe('interrupted');
    const requeued = await narration(client, 'queued', 'ask-rq2');
    const again = await narration(client, 'started', 'ask-rq2', client.frames.indexOf(requeued));
    const secondTurn = await narrationTurn(client, again);
    await done(client, secondTurn);
    expect(utteranceOf(client, secondTurn)).toBe('Second try.');
    expect(statesOf(client, 'ask-rq2')).toEqual(['started', 'queued', 'started']);
    finish(client, rig);
  });
});

describe('the narration queue and job completions', () => {
  it('a queued ask preempts a waiting job completion: it is voiced first when the floor frees', async () => {
    const rig = await start();
    rig.fake.script((body: RecordedRequest) => {
      if (isNarration(body)) return { text: 'Asking now.' };
      const last = body.messages.at(-1)?.content ?? '';
      return last.includes('background job') ? { text: 'Your other job finished.' } : { text: 'ok' };
    });
    const client = await openSession(rig);
    await deferredJob(rig, client, 'call_ja');
    await deferredJob(rig, client, 'call_jb');
    const busy = await busyFloor(rig, client);
    client.send({ type: 'tool_result', id: 'call_ja', content: 'A finished', outcome: 'succeeded', verified: true });
    raise(client, 'call_jb', { id: 'ask-p', prompt: 'Question for B?' });
    await narration(client, 'queued', 'ask-p');
    client.send({ type: 'tool_result', id: 'call_busy', content: 'found', outcome: 'succeeded' });
    const started = await narration(client, 'started', 'ask-p');
    const first = await narrationTurn(client, started);
    await done(client, first);
    expect(utteranceOf(client, first)).toBe('Asking now.');
    const completionTurn = await client.waitFor('turn', (f) => f.turn_id !== first && f.turn_id !== busy && pos(client, f) > pos(client, started), WAIT_MS);
    await done(client, completionTurn.turn_id);
    expect(utteranceOf(client, completionTurn.turn_id)).toBe('Your other job finished.');
    finish(client, rig);
  });
});

/** A narration streamed slowly enough that a user turn lands after its first delta. */
function narrationStream(): FakeReply {
  return { text: `Would you like red ${'... '.repeat(30)}or white?`, delayMs: 20 };
}


