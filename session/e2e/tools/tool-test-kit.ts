/**
 * Shared pieces of the end-to-end tool tests (session/e2e/tools/*.test.ts): a real server wired
 * to the fake OpenAI-compatible model server, readers for the model requests it recorded (wire
 * format), and a check that every request would be accepted by a real Chat Completions backend.
 * The unit ring's counterpart: session/testing/tool-kit.ts.
 */
import { afterEach, expect } from 'vitest';
import type { ServerFrame } from '../../protocol/server.ts';
import { openText, WAIT_MS } from '../../../signaling/testing/conversation.ts';
import { ask, toolCallFrame } from '../../testing/conversation.ts';
import { historyProblems } from '../../testing/tool-kit.ts';
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

// ---------------------------------------------------------------------------------------------
// Conversation helpers: session/testing/conversation.ts

export { ask, done, pos, toolCallFrame, utteranceOf } from '../../testing/conversation.ts';


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


export function requests(rig: Rig): WireRequest[] {
  return rig.fake.requests as WireRequest[];
}

export function request(rig: Rig, index: number): WireRequest {
  const body = requests(rig)[index];
  expect(body, `model request #${index} was made`).toBeDefined();
  return body as WireRequest;
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


/** Every request the rig's model received would be accepted by an OpenAI-compatible backend. */
export function expectValidRequests(rig: Rig): void {
  const problems = requests(rig).flatMap((body, index) => historyProblems(body).map((p) => `request #${index}: ${p}`));
  expect(problems).toEqual([]);
}

/** Ends a test: closes the socket, checks every server frame against SPEC and the model requests. */
export function finish(client: WsTestClient, rig?: Rig): void {
  if (!client.closed) client.close();
  client.assertProtocol();
  if (rig) expectValidRequests(rig);
}
