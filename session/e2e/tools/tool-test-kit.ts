/**
 * Shared pieces of the tool integration tests (session/tools/*.test.ts): a real server wired to
 * the fake OpenAI-compatible model server, readers for the model requests it recorded, and a
 * check that every request would be accepted by a real Chat Completions backend.
 */
import { afterEach, expect } from 'vitest';
import type { ServerFrame } from '../../protocol/server.ts';
import { openText, WAIT_MS } from '../../../signaling/testing/conversation.ts';
import { startTestServer, type TestServer } from '../../../signaling/testing/test-server.ts';
import type { WsTestClient } from '../../../signaling/testing/ws-test-client.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer, type FakeReply, type FakeToolCall } from '../../testing/fake-openai-server.ts';

export { WAIT_MS };

type FrameOf<T extends ServerFrame['type']> = Extract<ServerFrame, { type: T }>;

export interface Rig {
  fake: FakeOpenAiServer;
  t: TestServer;
}

/**
 * Returns a starter for rigs (fake model + real server with `env`); every rig started in a
 * test is stopped after it, so each test gets its own model script and server settings.
 */
export function useRigs(): (env?: Record<string, string>) => Promise<Rig> {
  const live: Rig[] = [];
  afterEach(async () => {
    for (const rig of live.splice(0)) {
      await rig.t.stop();
      await rig.fake.close();
    }
  });
  return async (env = {}) => {
    const fake = await startFakeOpenAiServer();
    // Text sessions only: no speech providers are started.
    const t = await startTestServer({ LLM_PROVIDER: 'openai', LLM_BASE_URL: fake.url, ...env }, { voice: { ok: false, reason: 'text-only test server' } });
    const rig = { fake, t };
    live.push(rig);
    return rig;
  };
}

/** A text session without greeting, with these mode fields. */
export async function open(rig: Rig, mode: Record<string, unknown> = {}): Promise<WsTestClient> {
  const { client } = await openText(rig.t, { greeting: false, ...mode });
  return client;
}

// ---------------------------------------------------------------------------------------------
// Tool declarations used across the files

export const lookup = {
  name: 'lookup',
  description: 'Look up an order',
  parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
};
export const weather = { name: 'weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
export const report = { name: 'report', description: 'Build a long report', deferrable: true };
export const transfer = { name: 'transfer', description: 'Move money', requires_permission: true };

// ---------------------------------------------------------------------------------------------
// Conversation helpers

/** Sends input_text; resolves with the reply's turn id once its asr arrived. */
export async function ask(client: WsTestClient, text: string): Promise<{ turnId: string; after: number }> {
  const after = client.frames.length;
  client.send({ type: 'input_text', text });
  const asr = await client.waitFor('asr', (f) => f.text === text && f.turn_id !== undefined, WAIT_MS, after);
  return { turnId: asr.turn_id as string, after };
}

/**
 * The opening most tool tests share: the model answers `question` with `calls` in one round
 * (then `answer`, and `later` replies after that, if given); a session declaring `tools`
 * (default: lookup) asks it. Resolves once the client received every tool_call frame, returned
 * in the order of `calls`.
 */
export async function openWithToolCall(
  rig: Rig,
  opening: { calls: (FakeToolCall & { id: string })[]; question: string; answer?: string; later?: FakeReply[]; tools?: unknown[] },
): Promise<{ client: WsTestClient; turnId: string; calls: FrameOf<'tool_call'>[] }> {
  const replies: FakeReply[] = [{ toolCalls: opening.calls }];
  if (opening.answer !== undefined) replies.push({ text: opening.answer });
  rig.fake.enqueue(...replies, ...(opening.later ?? []));
  const client = await open(rig, { tools: opening.tools ?? [lookup] });
  const { turnId } = await ask(client, opening.question);
  const calls: FrameOf<'tool_call'>[] = [];
  for (const call of opening.calls) calls.push(await toolCallFrame(client, call.id));
  return { client, turnId, calls };
}

/** Sends a frame the server must refuse; resolves with the first error frame after it. */
export async function refusalOf(client: WsTestClient, frame: Record<string, unknown>): Promise<FrameOf<'error'>> {
  const after = client.frames.length;
  client.send(frame);
  return client.waitFor('error', () => true, WAIT_MS, after);
}

/** Sends a frame that should start a turn by itself (a narration); resolves with that turn's id. */
export async function narrationAfter(client: WsTestClient, frame: Record<string, unknown>): Promise<string> {
  const after = client.frames.length;
  client.send(frame);
  return nextTurn(client, after);
}

export function done(client: WsTestClient, turnId: string, timeoutMs = WAIT_MS): Promise<FrameOf<'done'>> {
  return client.waitFor('done', (f) => f.turn_id === turnId, timeoutMs);
}

/** The first `turn` frame from index `after` on (a narration, sign-off or any new reply). */
export async function nextTurn(client: WsTestClient, after: number, timeoutMs = WAIT_MS): Promise<string> {
  const turn = await client.waitFor('turn', () => true, timeoutMs, after);
  return turn.turn_id;
}

export function toolCallFrame(client: WsTestClient, id: string, timeoutMs = WAIT_MS): Promise<FrameOf<'tool_call'>> {
  return client.waitFor('tool_call', (f) => f.id === id, timeoutMs);
}

/** Position of a frame object (as returned by waitFor/all) in arrival order. */
export function pos(client: WsTestClient, frame: object | undefined): number {
  const index = client.frames.findIndex((f) => f === frame);
  expect(index, 'frame was received').toBeGreaterThanOrEqual(0);
  return index;
}

export function utteranceOf(client: WsTestClient, turnId: string): string | undefined {
  return client.all('utterance').find((f) => f.turn_id === turnId)?.text;
}

/** Polls a condition; only a generous upper bound, never a timing assertion. */
export async function until(predicate: () => boolean, what: string, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------------------
// Model requests as the fake server recorded them (OpenAI wire format)

export interface WireToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}
export interface WireMessage {
  role: string;
  content: string | null;
  tool_calls?: WireToolCall[];
  tool_call_id?: string;
}
export interface WireRequest {
  model: string;
  messages: WireMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  tool_choice?: unknown;
}

/**
 * A model script for narration tests: it says `reply` once a request mentions `marker` (the
 * result being narrated has reached the context), and 'ok' to anything else.
 */
export function sayWhenMentioned(marker: string, reply: string): (body: WireRequest) => FakeReply {
  return (body) => (mentions(body, marker) ? { text: reply } : { text: 'ok' });
}

export function requests(rig: Rig): WireRequest[] {
  return rig.fake.requests as WireRequest[];
}

export function request(rig: Rig, index: number): WireRequest {
  const body = requests(rig)[index];
  expect(body, `model request #${index} was made`).toBeDefined();
  return body as WireRequest;
}

export async function waitRequests(rig: Rig, count: number): Promise<void> {
  await until(() => rig.fake.requests.length >= count, `${count} model request(s); got ${rig.fake.requests.length}`);
}

export function toolNames(body: WireRequest): string[] {
  return (body.tools ?? []).map((t) => t.function.name);
}

/** The parsed tool message answering `callId` in a request. */
export function toolResult(body: WireRequest, callId: string): { outcome: string; verified: boolean; content: unknown } | undefined {
  const message = body.messages.find((m) => m.role === 'tool' && m.tool_call_id === callId);
  return message ? (JSON.parse(message.content ?? 'null') as { outcome: string; verified: boolean; content: unknown }) : undefined;
}

/** The assistant message carrying the call `callId`. */
export function assistantCall(body: WireRequest, callId: string): WireToolCall | undefined {
  for (const m of body.messages) {
    const call = m.role === 'assistant' ? m.tool_calls?.find((c) => c.id === callId) : undefined;
    if (call) return call;
  }
  return undefined;
}

/** True when any message of the request contains `text`. */
export function mentions(body: WireRequest, text: string): boolean {
  return body.messages.some((m) => (m.content ?? '').includes(text));
}

/**
 * What a real Chat Completions backend rejects with HTTP 400: an assistant message with
 * tool_calls not followed at once by one tool message per call ("insufficient tool messages
 * following tool_calls message"), or a tool message that does not answer the calls right before.
 */
export function wireProblems(body: WireRequest): string[] {
  const problems: string[] = [];
  const msgs = body.messages;
  msgs.forEach((m, i) => {
    if (m.role === 'assistant' && m.tool_calls && m.tool_calls.length > 0) {
      const open = new Set(m.tool_calls.map((c) => c.id));
      let j = i + 1;
      for (; j < msgs.length && msgs[j]?.role === 'tool'; j += 1) open.delete(msgs[j]?.tool_call_id ?? '');
      if (open.size > 0) problems.push(`messages[${i}] calls ${[...open].join(',')} without tool messages right after it (next: ${msgs[j]?.role ?? 'end'})`);
    }
    if (m.role === 'tool') {
      let k = i - 1;
      while (k >= 0 && msgs[k]?.role === 'tool') k -= 1;
      const owner = msgs[k];
      if (!(owner?.role === 'assistant' && owner.tool_calls?.some((c) => c.id === m.tool_call_id))) {
        problems.push(`messages[${i}] tool message for ${m.tool_call_id} does not follow the assistant message that called it`);
      }
    }
  });
  return problems;
}

/** Every request the rig's model received would be accepted by an OpenAI-compatible backend. */
export function expectValidRequests(rig: Rig): void {
  const problems = requests(rig).flatMap((body, index) => wireProblems(body).map((p) => `request #${index}: ${p}`));
  expect(problems).toEqual([]);
}

/** Ends a test: closes the socket, checks every server frame against SPEC and the model requests. */
export function finish(client: WsTestClient, rig?: Rig): void {
  if (!client.closed) client.close();
  client.assertProtocol();
  if (rig) expectValidRequests(rig);
}
