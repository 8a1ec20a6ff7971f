/**
 * Shared pieces of the interaction unit tests (session/tools/interactions/*.test.ts): a rig with
 * short watchdog deadlines, the busy-floor and deferred-job fixtures, and readers for
 * tool_job_narration and tool_interaction_update_ack, over the unit ring (test-session.ts).
 */
import { expect } from 'vitest';
import type { ServerFrame } from '../protocol/server.ts';
import type { RecordedRequest } from './fake-llm.ts';
import type { TestSession, TestSessionOptions } from './test-session.ts';
import { ask, open, toolCallFrame, useRigs, WAIT_MS, type Rig } from './tool-kit.ts';

export type FrameOf<T extends ServerFrame['type']> = Extract<ServerFrame, { type: T }>;
export type Narration = FrameOf<'tool_job_narration'>;
export type NarrationState = Narration['state'];

/** Short deadlines for the tests: a 0.3 s watchdog, 3 rounds. */
export const TEST_TIMING = { INTERACTION_QUEUE_DEADLINE_S: 0.3, INTERACTION_QUEUE_DEADLINE_ROUNDS: 3 };

/** Rigs whose sessions run with these interaction deadlines (TEST_TIMING by default). */
export function useInteractionRigs(): (timing?: Partial<typeof TEST_TIMING>, options?: TestSessionOptions) => Promise<Rig> {
  const start = useRigs();
  return async (timing = {}, options = {}) => {
    const rig = await start({ ...options, tools: { ...options.tools, interactions: { ...TEST_TIMING, ...timing } } });
    rig.fake.script((body: RecordedRequest) => (isNarration(body) ? { text: 'Quick question for you.' } : { text: 'ok' }));
    return rig;
  };
}

// ---------------------------------------------------------------------------------------------
// Tools

/** A deferrable tool: its calls become jobs, so asks can be raised on a free floor. */
export const book = { name: 'book', description: 'Book a table', deferrable: true };
/** A plain client tool the busy-floor turn blocks on. */
export const lookup = { name: 'lookup', description: 'Look something up' };
/** Resolver targets. */
export const confirm = { name: 'confirm', description: 'Confirm a booking', parameters: { type: 'object', properties: { size: { type: 'string' } } } };
export const guarded = { name: 'guarded', description: 'Needs approval', requires_permission: true };

// ---------------------------------------------------------------------------------------------
// Model requests

/** A narration turn's request: its last message is the instruction to put the question(s). */
export function isNarration(body: RecordedRequest): boolean {
  const last = body.messages.at(-1);
  return last?.role === 'system' && last.content.startsWith('A tool needs a decision from the user.');
}

export function narrationRequests(rig: Rig): RecordedRequest[] {
  return rig.fake.requests.filter(isNarration);
}

// ---------------------------------------------------------------------------------------------
// Fixtures

/**
 * A deferred job: the model calls `book` (call id `callId`), the client defers it under `handle`,
 * and the turn ends. Returns the job id from the ack.
 */
export async function deferredJob(rig: Rig, client: TestSession, callId = 'call_job', handle = `h-${callId}`): Promise<string> {
  rig.fake.enqueue({ toolCalls: [{ id: callId, name: 'book', args: { guests: 2 } }] });
  const { turnId } = await ask(client, `start job ${callId}`);
  await toolCallFrame(client, callId);
  client.send({ type: 'tool_deferred', id: callId, handle });
  const ack = await client.waitFor('tool_deferred_ack', (f) => f.id === callId && f.accepted, WAIT_MS);
  await client.waitFor('done', (f) => f.turn_id === turnId, WAIT_MS);
  return ack.job_id as string;
}

/**
 * A user turn blocked on a `lookup` call the test answers later: the floor is busy (a reply is in
 * flight, waiting with nothing audible). Only its first round is enqueued; later requests fall to
 * the rig's script. Returns the turn id.
 */
export async function busyFloor(rig: Rig, client: TestSession, callId = 'call_busy'): Promise<string> {
  rig.fake.enqueue({ toolCalls: [{ id: callId, name: 'lookup', args: {} }] });
  const { turnId } = await ask(client, `look something up for ${callId}`);
  await toolCallFrame(client, callId);
  return turnId;
}

/** A session with the interaction tools declared, no greeting. */
export function openSession(rig: Rig, mode: Record<string, unknown> = {}): Promise<TestSession> {
  return open(rig, { tools: [book, lookup, confirm, guarded], ...mode });
}

// ---------------------------------------------------------------------------------------------
// Frames

export function raise(client: TestSession, callId: string, interaction: Record<string, unknown>, extra: Record<string, unknown> = {}): void {
  client.send({ type: 'tool_partial_result', id: callId, content: { step: 'needs input' }, interaction, ...extra });
}

/** The next tool_job_narration in `state` (from `after` on) that lists `interactionId`. */
export function narration(client: TestSession, state: NarrationState, interactionId?: string, after = 0, timeoutMs = WAIT_MS): Promise<Narration> {
  return client.waitFor('tool_job_narration', (f) => f.state === state && (interactionId === undefined || f.interaction_ids.includes(interactionId)), timeoutMs, after);
}

/** Every tool_job_narration state reported for one interaction, in order. */
export function statesOf(client: TestSession, interactionId: string): NarrationState[] {
  return client.all('tool_job_narration').filter((f) => f.interaction_ids.includes(interactionId)).map((f) => f.state);
}

/** Sends tool_interaction_update and waits for its ack. */
export async function update(
  client: TestSession,
  id: string,
  interactionId: string,
  state: string,
  note?: string,
): Promise<FrameOf<'tool_interaction_update_ack'>> {
  const after = client.frames.length;
  client.send({ type: 'tool_interaction_update', id, interaction_id: interactionId, state, ...(note ? { note } : {}) });
  return client.waitFor('tool_interaction_update_ack', () => true, WAIT_MS, after);
}

/** Sends a frame the server answers with an error, and waits for it: every earlier frame was handled. */
export async function barrier(client: TestSession): Promise<void> {
  const after = client.frames.length;
  client.send({ type: 'tool_progress', id: 'call_barrier_unknown', note: 'barrier' });
  await client.waitFor('error', (f) => f.code === 'unknown_tool_call', WAIT_MS, after);
}

/** The turn id of the narration turn that follows a `started` report. */
export async function narrationTurn(client: TestSession, started: Narration): Promise<string> {
  const index = client.frames.indexOf(started);
  expect(index).toBeGreaterThanOrEqual(0);
  const turn = await client.waitFor('turn', () => true, WAIT_MS, index);
  return turn.turn_id;
}

/** Errors other than the barrier's. */
export function realErrors(client: TestSession): FrameOf<'error'>[] {
  return client.all('error').filter((e) => !e.detail.includes('call_barrier_unknown'));
}
