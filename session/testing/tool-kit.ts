/**
 * Shared pieces of the tool unit tests (session/tools/**.test.ts): a rig (a scripted model and
 * the options of the sessions it opens), conversation helpers, readers for the model requests
 * (in the LanguageModel port's shapes) and a check that the history the model saw pairs every
 * tool call with its result, as a Chat Completions backend requires.
 */
import { expect } from 'vitest';
import { ask, toolCallFrame } from './conversation.ts';
import type { ServerFrame } from '../protocol/server.ts';
import type { SessionSnapshot } from '../resume/snapshot.ts';
import { FakeLanguageModel, type FakeReply, type FakeToolCall, type RecordedRequest } from './fake-llm.ts';
import { openTestSession, type TestSession, type TestSessionOptions } from './test-session.ts';

type FrameOf<T extends ServerFrame['type']> = Extract<ServerFrame, { type: T }>;

export { WAIT_MS } from './conversation.ts';

export interface Rig {
  fake: FakeLanguageModel;
  options: TestSessionOptions;
}

/** A starter for rigs: a fresh scripted model, and options for every session opened on it. */
export function useRigs(): (options?: TestSessionOptions) => Promise<Rig> {
  return async (options = {}) => ({ fake: new FakeLanguageModel(), options });
}

/** A text session without greeting, with these mode fields. */
export async function open(rig: Rig, mode: Record<string, unknown> = {}): Promise<TestSession> {
  return openTestSession({ ...rig.options, llm: rig.fake, mode: { greeting: false, ...rig.options.mode, ...mode } });
}

/** A new connection resuming a dropped session's snapshot (TestSession.drop()). */
export async function resume(rig: Rig, snapshot: SessionSnapshot, mode: Record<string, unknown> = {}): Promise<TestSession> {
  return openTestSession({ ...rig.options, llm: rig.fake, resume: snapshot, mode: { greeting: false, ...mode } });
}

export { passTime } from './test-session.ts';

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
// Conversation helpers: session/testing/conversation.ts

export { ask, done, narrationAfter, nextTurn, pos, refusalOf, toolCallFrame, utteranceOf } from './conversation.ts';


/**
 * The opening most tool tests share: the model answers `question` with `calls` in one round
 * (then `answer`, and `later` replies after that, if given); a session declaring `tools`
 * (default: lookup) asks it. Resolves once every tool_call frame arrived, in the order of `calls`.
 */
export async function openWithToolCall(
  rig: Rig,
  opening: { calls: (FakeToolCall & { id: string })[]; question: string; answer?: string; later?: FakeReply[]; tools?: unknown[] },
): Promise<{ client: TestSession; turnId: string; calls: FrameOf<'tool_call'>[] }> {
  const replies: FakeReply[] = [{ toolCalls: opening.calls }];
  if (opening.answer !== undefined) replies.push({ text: opening.answer });
  rig.fake.enqueue(...replies, ...(opening.later ?? []));
  const client = await open(rig, { tools: opening.tools ?? [lookup] });
  const { turnId } = await ask(client, opening.question);
  const calls: FrameOf<'tool_call'>[] = [];
  for (const call of opening.calls) calls.push(await toolCallFrame(client, call.id));
  return { client, turnId, calls };
}






/** Position of a frame object (as returned by waitFor/all) in arrival order. */


// ---------------------------------------------------------------------------------------------
// Model requests, as the LanguageModel port received them

/**
 * A model script for narration tests: it says `reply` once a request mentions `marker` (the
 * result being narrated has reached the context), and 'ok' to anything else.
 */
export function sayWhenMentioned(marker: string, reply: string): (body: RecordedRequest) => FakeReply {
  return (body) => (mentions(body, marker) ? { text: reply } : { text: 'ok' });
}

export function requests(rig: Rig): RecordedRequest[] {
  return rig.fake.requests;
}

export function request(rig: Rig, index: number): RecordedRequest {
  const body = requests(rig)[index];
  expect(body, `model request #${index} was made`).toBeDefined();
  return body as RecordedRequest;
}

export async function waitRequests(rig: Rig, count: number): Promise<void> {
  await rig.fake.waitRequests(count);
}

export function toolNames(body: RecordedRequest): string[] {
  return body.tools.map((t) => t.name);
}

/** The parsed tool message answering `callId` in a request. */
export function toolResult(body: RecordedRequest, callId: string): { outcome: string; verified: boolean; content: unknown } | undefined {
  const message = body.messages.find((m) => m.role === 'tool' && m.tool_call_id === callId);
  return message ? (JSON.parse(message.content) as { outcome: string; verified: boolean; content: unknown }) : undefined;
}

/** The assistant message's call `callId`. */
export function assistantCall(body: RecordedRequest, callId: string): { id: string; name: string; args: Record<string, unknown> } | undefined {
  for (const m of body.messages) {
    const call = m.role === 'assistant' ? m.tool_calls?.find((c) => c.id === callId) : undefined;
    if (call) return call;
  }
  return undefined;
}

/** True when any message of the request contains `text`. */
export function mentions(body: RecordedRequest, text: string): boolean {
  return body.messages.some((m) => m.content.includes(text));
}

/** The fields of a chat message the pairing check reads: the port's and the wire's messages both have them. */
interface PairedMessage {
  role: string;
  tool_calls?: readonly { id: string }[];
  tool_call_id?: string;
}

/**
 * What a Chat Completions backend rejects with HTTP 400: an assistant message with tool calls
 * not followed at once by one tool message per call, or a tool message that does not answer the
 * calls right before it. Works on the port's requests and on wire bodies alike.
 */
export function historyProblems(body: { messages: readonly PairedMessage[] }): string[] {
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

/** Every request the rig's model received pairs its tool calls and results. */
export function expectValidRequests(rig: Rig): void {
  const problems = requests(rig).flatMap((body, index) => historyProblems(body).map((p) => `request #${index}: ${p}`));
  expect(problems).toEqual([]);
}

/** Ends a test: closes the session, checks every frame against SPEC and the model requests. */
export function finish(client: TestSession, rig?: Rig): void {
  if (!client.closed) client.close();
  client.assertProtocol();
  if (rig) expectValidRequests(rig);
}
export type { RecordedRequest } from './fake-llm.ts';
