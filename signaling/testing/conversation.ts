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

import { WAIT_MS } from '../../session/testing/conversation.ts';

export { expectAlive, longSay, say, waitError, waitTurn, WAIT_MS, type Reply } from '../../session/testing/conversation.ts';

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

/** An abnormal drop, as a lost network causes it: no close handshake. */
export async function dropConnection(client: WsTestClient): Promise<void> {
  client.ws.terminate();
  await client.waitClose();
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

/**
 * Polls a condition (no timing assertion: only a generous upper bound). Only for state held by
 * other processes or engines (Redis, PostgreSQL, a second server), which sends this process no
 * event to wait on; in-process state has its own waits (TestServer.whenStashed, whenSessions).
 */
export async function eventually(predicate: () => boolean | Promise<boolean>, timeoutMs = WAIT_MS, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
