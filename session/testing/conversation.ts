import { expect } from 'vitest';
import type { ServerFrame } from '../protocol/server.ts';
import type { FrameLog } from './frame-log.ts';

/**
 * Conversation helpers for both rings: anything that reads frames like a client (the socket
 * client of the end-to-end tests, the TestSession of the unit tests) and sends JSON frames.
 */

type FrameOf<T extends ServerFrame['type']> = Extract<ServerFrame, { type: T }>;

/** A client of either ring. */
export type Conversant = FrameLog & { send(frame: unknown): void };

/** Generous bound for anything the server should do "at once" (simulated time in the unit ring). */
export const WAIT_MS = 10_000;

export interface Reply {
  turnId: string;
  /** Types of every frame carrying this turn id, in arrival order. */
  types: string[];
  deltas: string;
  utterance: FrameOf<'utterance'> | undefined;
  done: FrameOf<'done'>;
}

/** Waits for `done` of one turn and collects what the turn sent. */
export async function waitTurn(client: Conversant, turnId: string, timeoutMs = WAIT_MS): Promise<Reply> {
  const done = await client.waitFor('done', (f) => f.turn_id === turnId, timeoutMs);
  return {
    turnId,
    types: client.turnTypes(turnId),
    deltas: client.all('text_delta').filter((f) => f.turn_id === turnId).map((f) => f.delta).join(''),
    utterance: client.all('utterance').find((f) => f.turn_id === turnId),
    done,
  };
}

/** Sends input_text and waits for the whole reply to it. */
export async function say(client: Conversant, text: string, timeoutMs = WAIT_MS): Promise<Reply & { asr: FrameOf<'asr'> }> {
  const after = client.frames.length;
  client.send({ type: 'input_text', text });
  const asr = await client.waitFor('asr', (f) => f.text === text && f.input_source === 'text', timeoutMs, after);
  expect(asr.turn_id, 'asr of input_text carries the reply turn_id').toEqual(expect.any(String));
  const reply = await waitTurn(client, asr.turn_id as string, timeoutMs);
  return { ...reply, asr };
}

/** A complete, well-formed round trip: the session is alive and answering. */
export async function expectAlive(client: Conversant, text = 'hello there'): Promise<void> {
  const reply = await say(client, text);
  expect(reply.done.status).toBe('completed');
  expect(reply.utterance?.text.length).toBeGreaterThan(0);
}

/** Waits for the next error frame with `code` (from `after` on). */
export function waitError(client: Conversant, code: string, after = 0, timeoutMs = WAIT_MS): Promise<FrameOf<'error'>> {
  return client.waitFor('error', (f) => f.code === code, timeoutMs, after);
}

/** `'say '` plus n distinct words: the local model repeats it back, one word per delta. */
export function longSay(words = 60): string {
  return `say ${Array.from({ length: words }, (_, i) => `word${i}`).join(' ')}`;
}

/** Sends input_text; resolves with the reply's turn id once its asr arrived. */
export async function ask(client: Conversant, text: string): Promise<{ turnId: string; after: number }> {
  const after = client.frames.length;
  client.send({ type: 'input_text', text });
  const asr = await client.waitFor('asr', (f) => f.text === text && f.turn_id !== undefined, WAIT_MS, after);
  return { turnId: asr.turn_id as string, after };
}

/** Sends a frame the session must refuse; resolves with the first error frame after it. */
export async function refusalOf(client: Conversant, frame: Record<string, unknown>): Promise<FrameOf<'error'>> {
  const after = client.frames.length;
  client.send(frame);
  return client.waitFor('error', () => true, WAIT_MS, after);
}

/** Sends a frame that should start a turn by itself (a narration); resolves with that turn's id. */
export async function narrationAfter(client: Conversant, frame: Record<string, unknown>): Promise<string> {
  const after = client.frames.length;
  client.send(frame);
  return nextTurn(client, after);
}

export function done(client: Conversant, turnId: string, timeoutMs = WAIT_MS): Promise<FrameOf<'done'>> {
  return client.waitFor('done', (f) => f.turn_id === turnId, timeoutMs);
}

/** The first `turn` frame from index `after` on (a narration, sign-off or any new reply). */
export async function nextTurn(client: Conversant, after: number, timeoutMs = WAIT_MS): Promise<string> {
  const turn = await client.waitFor('turn', () => true, timeoutMs, after);
  return turn.turn_id;
}

export function toolCallFrame(client: Conversant, id: string, timeoutMs = WAIT_MS): Promise<FrameOf<'tool_call'>> {
  return client.waitFor('tool_call', (f) => f.id === id, timeoutMs);
}

export function pos(client: Conversant, frame: object | undefined): number {
  const index = client.frames.findIndex((f) => f === frame);
  expect(index, 'frame was received').toBeGreaterThanOrEqual(0);
  return index;
}

export function utteranceOf(client: Conversant, turnId: string): string | undefined {
  return client.all('utterance').find((f) => f.turn_id === turnId)?.text;
}
