import type { FakeReply } from '../../testing/fake-llm.ts';
import { describe, expect, it } from 'vitest';
import { useFakeClock } from '../../testing/test-session.ts';
import type { TestSession } from '../../testing/test-session.ts';
import { ask, done, finish, mentions, open, requests, passTime, resume, WAIT_MS, type Rig, type RecordedRequest } from '../../testing/tool-kit.ts';
import {
  barrier,
  book,
  busyFloor,
  deferredJob,
  isNarration,
  narration,
  narrationTurn,
  openSession,
  raise,
  statesOf,
  update,
  useInteractionRigs,
} from '../../testing/interaction-kit.ts';

/**
 * SPEC "Interaction close (tool_interaction_update)" and the tool_interaction_update_ack
 * rejection reasons: every update is answered; the first close wins; a close stops queued or
 * speaking narration and tells the model; interaction state does not survive a resume.
 */

const start = useInteractionRigs();
useFakeClock();

/** A deferred job with a voiced ask `id` on it (narration turn completed). */
async function voicedAsk(rig: Rig, client: TestSession, id: string): Promise<void> {
  await deferredJob(rig, client);
  raise(client, 'call_job', { id, prompt: `Question ${id}?`, options: ['yes', 'no'] });
  await done(client, await narrationTurn(client, await narration(client, 'started', id)));
}

describe('tool_interaction_update_ack', () => {
  it('applied: {id: canonical call id (the update named the deferred handle), interaction_id, state, applied: true, reason: null}', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, 'ask-a');
    const ack = await update(client, 'h-call_job', 'ask-a', 'resolved', 'chosen in the app');
    expect(ack).toEqual({ type: 'tool_interaction_update_ack', id: 'call_job', interaction_id: 'ask-a', state: 'resolved', applied: true, reason: null });
    finish(client, rig);
  });

  it('invalid_interaction_id: an empty interaction_id, or one over 64 characters', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, 'ask-i');
    for (const bad of ['', 'x'.repeat(65)]) {
      const ack = await update(client, 'call_job', bad, 'resolved');
      expect(ack).toEqual({ type: 'tool_interaction_update_ack', id: 'call_job', interaction_id: null, state: 'resolved', applied: false, reason: 'invalid_interaction_id' });
    }
    // 64 characters is well-formed (merely unknown here).
    expect((await update(client, 'call_job', 'y'.repeat(64), 'resolved')).reason).toBe('unknown_interaction');
    expect(statesOf(client, 'ask-i')).toEqual(['started']);
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });

  it('invalid_state: a state other than resolved, cancelled or superseded', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, 'ask-st');
    for (const bad of ['done', 'queued', 'RESOLVED', '']) {
      const ack = await update(client, 'call_job', 'ask-st', bad);
      expect(ack).toEqual({ type: 'tool_interaction_update_ack', id: 'call_job', interaction_id: 'ask-st', state: null, applied: false, reason: 'invalid_state' });
    }
    expect(statesOf(client, 'ask-st')).toEqual(['started']);
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });

  it('a malformed update (fields missing or of the wrong type) is still answered with an ack, never an error frame', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, 'ask-m');
    const cases: [Record<string, unknown>, string][] = [
      [{ id: 'call_job', state: 'resolved' }, 'invalid_interaction_id'],
      [{ id: 'call_job', interaction_id: 42, state: 'resolved' }, 'invalid_interaction_id'],
      [{ id: 'call_job', interaction_id: 'ask-m' }, 'invalid_state'],
      [{ interaction_id: 'ask-m', state: 'resolved' }, 'unknown_interaction'],
    ];
    for (const [fields, reason] of cases) {
      const after = client.frames.length;
      client.send({ type: 'tool_interaction_update', ...fields });
      const ack = await client.waitFor('tool_interaction_update_ack', () => true, 5000, after);
      expect(ack).toMatchObject({ applied: false, reason });
    }
    expect(client.all('error')).toEqual([]);
    expect(statesOf(client, 'ask-m')).toEqual(['started']);
    finish(client, rig);
  });

  it('unknown_interaction: never seen, on an unknown call (id null), or belonging to another call', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, 'ask-k');
    expect(await update(client, 'call_job', 'never-raised', 'cancelled')).toEqual({
      type: 'tool_interaction_update_ack', id: 'call_job', interaction_id: 'never-raised', state: 'cancelled', applied: false, reason: 'unknown_interaction',
    });
    expect(await update(client, 'call_nobody', 'ask-k', 'cancelled')).toEqual({
      type: 'tool_interaction_update_ack', id: null, interaction_id: 'ask-k', state: 'cancelled', applied: false, reason: 'unknown_interaction',
    });
    await busyFloor(rig, client, 'call_other');
    expect(await update(client, 'call_other', 'ask-k', 'cancelled')).toMatchObject({ id: 'call_other', applied: false, reason: 'unknown_interaction' });
    expect(statesOf(client, 'ask-k')).toEqual(['started']);
    finish(client, rig);
  });

  it('already_closed: a duplicate of the same update (the first close wins)', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, 'ask-dup');
    expect(await update(client, 'call_job', 'ask-dup', 'resolved')).toMatchObject({ applied: true, reason: null });
    expect(await update(client, 'call_job', 'ask-dup', 'resolved')).toEqual({
      type: 'tool_interaction_update_ack', id: 'call_job', interaction_id: 'ask-dup', state: 'resolved', applied: false, reason: 'already_closed',
    });
    expect(await update(client, 'call_job', 'ask-dup', 'cancelled')).toMatchObject({ applied: false, reason: 'already_closed' });
    expect(statesOf(client, 'ask-dup')).toEqual(['started', 'resolved']);
    finish(client, rig);
  });

  it('already_closed: cancelled earlier (host tool_cancel of its call)', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, 'ask-cx');
    client.send({ type: 'tool_cancel', id: 'call_job' });
    await narration(client, 'cancelled', 'ask-cx');
    expect(await update(client, 'call_job', 'ask-cx', 'resolved')).toMatchObject({ id: 'call_job', applied: false, reason: 'already_closed' });
    finish(client, rig);
  });

  it('already_closed: its call resolved', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, 'ask-rs');
    client.send({ type: 'tool_result', id: 'call_job', content: 'booked', outcome: 'succeeded', verified: true });
    await narration(client, 'resolved', 'ask-rs');
    expect(await update(client, 'h-call_job', 'ask-rs', 'cancelled')).toMatchObject({ id: 'call_job', applied: false, reason: 'already_closed' });
    finish(client, rig);
  });

  it('already_closed: a newer ask replaced it', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, 'ask-v1');
    raise(client, 'call_job', { id: 'ask-v2', prompt: 'Newer question?' });
    await narration(client, 'superseded', 'ask-v1');
    expect(await update(client, 'call_job', 'ask-v1', 'resolved')).toMatchObject({ applied: false, reason: 'already_closed' });
    expect(await update(client, 'call_job', 'ask-v2', 'resolved')).toMatchObject({ applied: true });
    finish(client, rig);
  });
});

describe('what a close does', () => {
  it('a close stops speaking narration: the narration turn is interrupted and nothing more of it is sent', async () => {
    const rig = await start();
    rig.fake.script((body: RecordedRequest) => (isNarration(body) ? slowNarration() : { text: 'ok' }));
    const client = await openSession(rig);
    await deferredJob(rig, client);
    raise(client, 'call_job', { id: 'ask-stop', prompt: 'Long question?' });
    const started = await narration(client, 'started', 'ask-stop');
    const turnId = await narrationTurn(client, started);
    await client.waitFor('text_delta', (f) => f.turn_id === turnId, WAIT_MS);
    const ack = await update(client, 'call_job', 'ask-stop', 'resolved');
    expect(ack.applied).toBe(true);
    const end = await done(client, turnId);
    expect(end.status).toBe('interrupted');
    const deltasAtStop = client.all('text_delta').filter((f) => f.turn_id === turnId).length;
    await passTime(300);
    expect(client.all('text_delta').filter((f) => f.turn_id === turnId)).toHaveLength(deltasAtStop);
    expect(statesOf(client, 'ask-stop')).toEqual(['started', 'resolved']);
    finish(client, rig);
  });

  it('a close tells the model the decision is closed (context note, with the host note)', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, 'ask-told');
    await update(client, 'call_job', 'ask-told', 'cancelled', 'user tapped cancel');
    const before = requests(rig).length;
    const { turnId } = await ask(client, 'what now?');
    await done(client, turnId);
    const body = requests(rig)[before]!;
    expect(mentions(body, 'Interaction ask-told')).toBe(true);
    expect(mentions(body, 'is closed (cancelled)')).toBe(true);
    expect(mentions(body, 'user tapped cancel')).toBe(true);
    // Closed: the user turn is no longer constrained to interaction_transition.
    expect(body.toolChoice).toBe('auto');
    expect(body.tools.map((t) => t.name)).not.toContain('interaction_transition');
    finish(client, rig);
  });

  it('reset: narrations not yet ended are superseded and nothing more is asked; the host may still close the decision', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await voicedAsk(rig, client, 'ask-reset');
    const after = client.frames.length;
    client.send({ type: 'reset' });
    await narration(client, 'superseded', 'ask-reset', after);
    const before = requests(rig).length;
    const { turnId } = await ask(client, 'fresh start');
    await done(client, turnId);
    expect(requests(rig)[before]!.toolChoice).toBe('auto');
    expect(await update(client, 'call_job', 'ask-reset', 'resolved')).toMatchObject({ applied: true });
    expect(statesOf(client, 'ask-reset')).toEqual(['started', 'superseded']);
    finish(client, rig);
  });

  it('interaction state does not survive a resume: the old id is unknown_interaction, no turn is forced, a fresh ask works', async () => {
    const rig = await start();
    const first = await open(rig, { tools: [book] });
    await voicedAsk(rig, first, 'ask-before');
    const client = await resume(rig, await first.drop());
    await client.waitFor('tool_deferred_resume', (f) => f.id === 'call_job', WAIT_MS);
    expect(await update(client, 'call_job', 'ask-before', 'resolved')).toEqual({
      type: 'tool_interaction_update_ack', id: 'call_job', interaction_id: 'ask-before', state: 'resolved', applied: false, reason: 'unknown_interaction',
    });
    const before = requests(rig).length;
    const { turnId } = await ask(client, 'hello again');
    await done(client, turnId);
    expect(requests(rig)[before]!.toolChoice).toBe('auto');
    // The call survived (it was adopted): a fresh ask on it is voiced.
    raise(client, 'call_job', { id: 'ask-after', prompt: 'Still want it?' });
    await done(client, await narrationTurn(client, await narration(client, 'started', 'ask-after')));
    await barrier(client);
    first.assertProtocol();
    finish(client, rig);
  });
});

/** A narration streamed slowly: a close lands mid-stream. */
function slowNarration(): FakeReply {
  return { text: `This is a long ${Array.from({ length: 40 }, (_, i) => `word${i} `).join('')}end.`, delayMs: 20 };
}

