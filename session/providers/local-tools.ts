import type { ChatMessage, ModelRequest, ModelTool, ToolCallRequest } from './llm.ts';
import { randomId } from '../ids.ts';
import { INSTRUCTION_MARK } from '../tools/interactions/narration-queue.ts';
import { OPEN_QUESTIONS_MARK, TRANSITION_TOOL } from '../tools/interactions/transition-tool.ts';

/**
 * The offline model's tool use, deterministic: it calls a tool when the user names it (the name
 * as written, or with spaces for underscores), taking arguments from a JSON object or
 * `key=value` pairs in the message; it ends the call on goodbye when end_call is offered; it
 * settles a tool's open question when interaction_transition is forced (see transitionCall); and
 * it reports a tool's result honestly, saying whether success was verified.
 */
export function plannedToolCall(request: ModelRequest): ToolCallRequest | undefined {
  if (request.toolChoice === 'none' || request.tools.length === 0) return undefined;
  const last = request.messages[request.messages.length - 1];
  if (last?.role !== 'user') return undefined;
  const text = last.content;
  const lower = text.toLowerCase();
  const allowed = request.tools.filter((t) => {
    const c = request.toolChoice;
    if (typeof c === 'object' && 'allowed' in c) return c.allowed.includes(t.name);
    if (typeof c === 'object' && 'tool' in c) return c.tool === t.name;
    return true;
  });
  const forced = request.toolChoice === 'required' || (typeof request.toolChoice === 'object' && 'tool' in request.toolChoice);
  const transition = allowed.find((t) => t.name === TRANSITION_TOOL);
  if (transition && typeof request.toolChoice === 'object' && 'tool' in request.toolChoice) return transitionCall(transition, text);
  if (allowed.some((t) => t.name === 'end_call') && /\b(bye|goodbye|that's all|end the call)\b/.test(lower)) {
    return { id: randomId('call', 6), name: 'end_call', args: { farewell: 'Goodbye! Talk to you soon.' } };
  }
  const named = allowed.find((t) => t.name !== 'end_call' && (lower.includes(t.name.toLowerCase()) || lower.includes(t.name.toLowerCase().replace(/_/g, ' '))));
  const tool = named ?? (forced ? allowed[0] : undefined);
  if (!tool) return undefined;
  return { id: randomId('call', 6), name: tool.name, args: argumentsFrom(text) };
}

interface OpenQuestion {
  interaction_id: string;
  prompt: string;
  options?: string[];
}

const CANCEL = /\b(never ?mind|cancel|forget (?:it|about it)|don'?t bother|no longer)\b/i;

/**
 * The forced interaction_transition, decided from the user's words: "never mind" or "cancel"
 * cancels the latest question; naming one of a question's options resolves it with that option;
 * any answer to a free-text question resolves it with the words; otherwise it asks to clarify.
 * The open questions are read from the tool's description (transition-tool.ts).
 */
export function transitionCall(tool: ModelTool, text: string): ToolCallRequest {
  const id = randomId('call', 6);
  const questions = openQuestions(tool);
  const latest = questions.at(-1);
  const call = (args: Record<string, unknown>): ToolCallRequest => ({ id, name: TRANSITION_TOOL, args });
  if (!latest) return call({ action: 'clarify', message: 'Which question do you mean?' });
  if (CANCEL.test(text)) return call({ interaction_id: latest.interaction_id, action: 'cancel' });
  const lower = text.toLowerCase();
  for (const q of [...questions].reverse()) {
    const options = [...(q.options ?? [])].sort((a, b) => b.length - a.length);
    const chosen = options.find((o) => new RegExp(`(^|[^\\p{L}\\p{N}])${escapeRegExp(o.toLowerCase())}($|[^\\p{L}\\p{N}])`, 'u').test(lower));
    if (chosen) return call({ interaction_id: q.interaction_id, action: 'resolve', choice: chosen });
  }
  if (!latest.options && text.trim()) return call({ interaction_id: latest.interaction_id, action: 'resolve', answer: text.trim() });
  const choices = latest.options?.join(', ') ?? '';
  return call({ interaction_id: latest.interaction_id, action: 'clarify', message: `Please choose one of: ${choices}.` });
}

function openQuestions(tool: ModelTool): OpenQuestion[] {
  const at = tool.description?.lastIndexOf(OPEN_QUESTIONS_MARK) ?? -1;
  if (at < 0) return [];
  try {
    const parsed: unknown = JSON.parse(tool.description!.slice(at + OPEN_QUESTIONS_MARK.length));
    return Array.isArray(parsed) ? (parsed as OpenQuestion[]).filter((q) => typeof q?.interaction_id === 'string') : [];
  } catch {
    return [];
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A narration turn's instruction (interactions/narration-queue.ts): the question(s) to put to the user. */
function narrationQuestion(messages: readonly ChatMessage[]): string | undefined {
  const last = messages[messages.length - 1];
  if (last?.role !== 'system' || !last.content.startsWith(INSTRUCTION_MARK)) return undefined;
  const colon = last.content.indexOf(': ');
  const body = colon >= 0 ? last.content.slice(colon + 2) : last.content;
  return body.replace(/\s*\[interaction [^\]]*\]/g, '').replace(/"/g, '').trim();
}

export function argumentsFrom(text: string): Record<string, unknown> {
  const json = /\{[\s\S]*\}/.exec(text);
  if (json) {
    try {
      const parsed: unknown = JSON.parse(json[0]);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // fall through to key=value pairs
    }
  }
  const args: Record<string, unknown> = {};
  for (const m of text.matchAll(/([A-Za-z_][\w]*)\s*=\s*("([^"]*)"|[^\s,]+)/g)) args[m[1]!] = m[3] ?? m[2];
  return args;
}

/**
 * A reply to the latest tool results, if the last messages are tool results; in a narration turn
 * of a tool's question, the question itself.
 */
export function replyToToolResults(messages: readonly ChatMessage[]): string | undefined {
  const question = narrationQuestion(messages);
  if (question) return question;
  let i = messages.length - 1;
  // Notes the application added while the tools ran (progress, decisions) come after the results.
  while (i >= 0 && messages[i]!.role === 'system' && messages[i]!.content.startsWith('Context from the application:')) i -= 1;
  const results: { id: string; content: string }[] = [];
  for (; i >= 0 && messages[i]!.role === 'tool'; i -= 1) {
    const m = messages[i] as Extract<ChatMessage, { role: 'tool' }>;
    results.unshift({ id: m.tool_call_id, content: m.content });
  }
  if (results.length === 0) return undefined;
  const caller = messages[i];
  const names = new Map(caller?.role === 'assistant' ? (caller.tool_calls ?? []).map((c) => [c.id, c.name]) : []);
  return results.map((r) => describe(names.get(r.id) ?? 'the tool', r.content)).join(' ');
}

function describe(name: string, content: string): string {
  let parsed: { outcome?: string; verified?: boolean; content?: unknown } = {};
  try {
    parsed = JSON.parse(content) as typeof parsed;
  } catch {
    return `The ${name} call returned: ${content.slice(0, 200)}.`;
  }
  const body = typeof parsed.content === 'string' ? parsed.content : JSON.stringify(parsed.content);
  switch (parsed.outcome) {
    case 'succeeded':
      return parsed.verified ? `Done: ${name} succeeded. ${body}` : `${name} reported success, but it was not verified, so I can't confirm it worked. ${body}`;
    case 'failed':
      return `${name} failed: ${body}`;
    case 'cancelled':
      return `${name} was cancelled: ${body}`;
    case 'timed_out':
      return `${name} timed out; I don't know whether it happened.`;
    default:
      return `I don't know yet whether ${name} worked: ${body}`;
  }
}
