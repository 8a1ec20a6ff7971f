import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { ServerFrame } from '../../session/protocol/server.ts';
import type { TestServer } from './test-server.ts';
import { startSession, WsTestClient } from './ws-test-client.ts';

/**
 * Small helpers shared by the integration tests: start frames, a typed-turn round trip, and the
 * "error frame then close code" check. They drive the real server; nothing here is mocked.
 */

type FrameOf<T extends ServerFrame['type']> = Extract<ServerFrame, { type: T }>;

/** Generous bound for anything the server should do "at once". */
export const WAIT_MS = 10_000;

/** A fresh, valid session id. */
export function sid(prefix = 'test'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

export function textStart(sessionId: string, mode: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { session_id: sessionId, mode: { kind: 'service', modality: 'text', ...mode }, ...extra };
}

export function voiceStart(
  sessionId: string,
  mode: Record<string, unknown> = {},
  audio: Record<string, unknown> = { sr: 16000 },
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { session_id: sessionId, mode: { kind: 'service', modality: 'voice', ...mode }, audio, ...extra };
}

/** A text session authenticated with the test server's persistent key in the start frame. */
export async function openText(
  t: TestServer,
  mode: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Promise<{ client: WsTestClient; ready: FrameOf<'ready'>; sessionId: string }> {
  const sessionId = sid();
  const { client, ready } = await startSession(t.wsUrl, { ...textStart(sessionId, mode), api_key: t.key, ...extra });
  return { client, ready, sessionId };
}

export interface Reply {
  turnId: string;
  /** Types of every frame carrying this turn id, in arrival order. */
  types: string[];
  deltas: string;
  utterance: FrameOf<'utterance'> | undefined;
  done: FrameOf<'done'>;
}

/** Waits for `done` of one turn and collects what the turn sent. */
export async function waitTurn(client: WsTestClient, turnId: string, timeoutMs = WAIT_MS): Promise<Reply> {
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
export async function say(client: WsTestClient, text: string, timeoutMs = WAIT_MS): Promise<Reply & { asr: FrameOf<'asr'> }> {
  const after = client.frames.length;
  client.send({ type: 'input_text', text });
  const asr = await client.waitFor('asr', (f) => f.text === text && f.input_source === 'text', timeoutMs, after);
  expect(asr.turn_id, 'asr of input_text carries the reply turn_id').toEqual(expect.any(String));
  const reply = await waitTurn(client, asr.turn_id as string, timeoutMs);
  return { ...reply, asr };
}

/** An abnormal drop, as a lost network causes it: no close handshake. */
export async function dropConnection(client: WsTestClient): Promise<void> {
  client.ws.terminate();
  await client.waitClose();
}

/** A complete, well-formed round trip: the session is alive and answering. */
export async function expectAlive(client: WsTestClient, text = 'hello there'): Promise<void> {
  const reply = await say(client, text);
  expect(reply.done.status).toBe('completed');
  expect(reply.utterance?.text.length).toBeGreaterThan(0);
}

/** Waits for the next error frame with `code` (from `after` on). */
export function waitError(client: WsTestClient, code: string, after = 0, timeoutMs = WAIT_MS): Promise<FrameOf<'error'>> {
  return client.waitFor('error', (f) => f.code === code, timeoutMs, after);
}

/** A fatal rejection: exactly one error frame with this code and retryable value, then this close code. */
export async function expectFatal(client: WsTestClient, code: string, retryable: boolean, closeCode: number): Promise<FrameOf<'error'>> {
  const closed = await client.waitClose(WAIT_MS);
  const errors = client.all('error');
  expect(errors.map((e) => e.code)).toEqual([code]);
  const error = errors[0] as FrameOf<'error'>;
  expect(error.retryable).toBe(retryable);
  expect(typeof error.detail).toBe('string');
  expect(closed.code).toBe(closeCode);
  expect(client.all('ready')).toHaveLength(0);
  return error;
}

/** Sends one start frame on a fresh socket and expects a fatal rejection. */
export async function expectStartRejected(
  wsUrl: string,
  start: unknown,
  code: string,
  closeCode: number,
  headers: Record<string, string> = {},
): Promise<FrameOf<'error'>> {
  const client = await WsTestClient.open(wsUrl, headers);
  client.send(typeof start === 'string' ? start : { type: 'start', ...(start as Record<string, unknown>) });
  const error = await expectFatal(client, code, false, closeCode);
  client.assertProtocol();
  return error;
}

/** Polls a condition (no timing assertion: only a generous upper bound). */
export async function eventually(predicate: () => boolean | Promise<boolean>, timeoutMs = WAIT_MS, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** `'say '` plus n distinct words: the local model repeats it back, one word per delta. */
export function longSay(words = 60): string {
  return `say ${Array.from({ length: words }, (_, i) => `word${i}`).join(' ')}`;
}
