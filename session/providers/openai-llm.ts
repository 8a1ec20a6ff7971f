/**
 * LanguageModel adapter for any OpenAI-compatible Chat Completions endpoint (OpenAI, LM Studio,
 * llama.cpp server, vLLM, Ollama's /v1). Always streams over SSE and translates the wire chunks
 * into ModelEvents.
 *
 * Abort contract: when `request.signal` aborts, `stream()` stops reading and returns silently
 * without a `finish` event (it never throws an AbortError). Consumers tell "aborted" from
 * "finished" by the missing `finish`.
 */
import { randomUUID } from 'node:crypto';
import { ModelError } from './llm.ts';
import type {
  ChatMessage,
  LanguageModel,
  ModelEvent,
  ModelRequest,
  ModelTool,
  ModelToolChoice,
  ToolCallRequest,
} from './llm.ts';
import { abortable, describeError, describeHttpError, endpoint, isRetryableStatus, postJson, truncate } from './openai-http.ts';

export interface OpenAiLanguageModelOptions {
  /** e.g. `http://127.0.0.1:1234/v1`; a trailing slash is tolerated. */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Bounds the wait for response headers only, so long generations are not cut off. Default 60000. */
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
  /** Receives non-fatal oddities (e.g. malformed tool arguments the port turns into `{}`). */
  onWarning?: (message: string) => void;
}

type FinishReason = Extract<ModelEvent, { type: 'finish' }>['reason'];

const DEFAULT_TIMEOUT_MS = 60_000;

export class OpenAiLanguageModel implements LanguageModel {
  readonly name: string;
  private readonly url: string;

  constructor(private readonly options: OpenAiLanguageModelOptions) {
    this.name = `openai:${options.model}`;
    this.url = endpoint(options.baseUrl, 'chat/completions');
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const { signal } = request;
    if (signal.aborted) return;
    // One controller covers the caller's abort, the header timeout, and our own cleanup, so the
    // socket is released even when the consumer stops iterating early.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.post(request, controller);
      if (!response || signal.aborted) return;
      if (!response.ok) {
        const error = await httpError(response);
        if (signal.aborted) return;
        throw error;
      }
      if (!response.body) throw new ModelError(`${this.url} returned no body`, true);
      yield* this.readEvents(response.body, signal);
    } finally {
      signal.removeEventListener('abort', onAbort);
      controller.abort();
    }
  }

  /** Resolves undefined when the caller aborted before headers arrived. */
  private async post(request: ModelRequest, controller: AbortController): Promise<Response | undefined> {
    const outcome = await postJson({
      url: this.url,
      body: this.requestBody(request),
      apiKey: this.options.apiKey,
      accept: 'text/event-stream',
      timeoutMs: this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      controller,
      callerSignal: request.signal,
      fetchImpl: this.options.fetchImpl,
    });
    if (outcome.kind === 'response') return outcome.response;
    if (outcome.kind === 'aborted') return undefined;
    if (outcome.kind === 'timeout') throw new ModelError(`no response from ${this.url} within ${outcome.timeoutMs} ms`, true);
    throw new ModelError(`request to ${this.url} failed: ${describeError(outcome.error)}`, true);
  }

  private requestBody(request: ModelRequest): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: request.model ?? this.options.model,
      messages: request.messages.map(toWireMessage),
      stream: true,
    };
    if (request.temperature !== undefined) body.temperature = request.temperature;
    return { ...body, ...toolFields(request.tools, request.toolChoice) };
  }

  private async *readEvents(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const sse = new SseDataParser();
    const acc = new CompletionAccumulator();
    let sawDone = false;
    let ended = false;
    while (!sawDone && !ended) {
      if (signal.aborted) return;
      let payloads: string[];
      try {
        // Racing the read against the signal keeps abort prompt even with a fetchImpl whose body
        // ignores the signal.
        const chunk = await abortable(reader.read(), signal);
        ended = chunk.done;
        payloads = chunk.done
          ? [...sse.push(decoder.decode()), ...sse.end()]
          : sse.push(decoder.decode(chunk.value, { stream: true }));
      } catch (err) {
        if (signal.aborted) return;
        throw new ModelError(`stream from ${this.url} broke: ${describeError(err)}`, true);
      }
      for (const data of payloads) {
        if (data === '[DONE]') {
          sawDone = true;
          break;
        }
        for (const delta of acc.apply(parseChunk(data))) yield { type: 'text', delta };
      }
    }
    if (signal.aborted) return;
    if (!sawDone && acc.finishReason === undefined) throw new ModelError('stream ended early', true);
    for (const call of acc.toolCalls(this.options.onWarning)) yield { type: 'tool_call', call };
    yield { type: 'finish', reason: mapFinishReason(acc.finishReason) };
  }
}

// ---------------------------------------------------------------------------------------------
// Request mapping

function toWireMessage(message: ChatMessage): Record<string, unknown> {
  if (message.role === 'assistant' && message.tool_calls && message.tool_calls.length > 0) {
    return {
      role: 'assistant',
      // OpenAI expects null rather than '' when the turn was only tool calls.
      content: message.content || null,
      tool_calls: message.tool_calls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.args) },
      })),
    };
  }
  if (message.role === 'tool') return { role: 'tool', tool_call_id: message.tool_call_id, content: message.content };
  return { role: message.role, content: message.content };
}

/**
 * `{allowed}` means "the model may only use these": we offer just those tools with
 * tool_choice 'auto' rather than OpenAI's newer `allowed_tools` form, which local servers
 * (llama.cpp, LM Studio, Ollama) do not understand. Both fields are omitted when no tool is
 * offered, since servers reject a tool_choice without tools.
 */
function toolFields(tools: ModelTool[], choice: ModelToolChoice): Record<string, unknown> {
  let offered = tools;
  let toolChoice: unknown;
  if (typeof choice === 'string') {
    toolChoice = choice;
  } else if ('allowed' in choice) {
    const allowed = new Set(choice.allowed);
    offered = tools.filter((tool) => allowed.has(tool.name));
    toolChoice = 'auto';
  } else {
    toolChoice = { type: 'function', function: { name: choice.tool } };
  }
  if (offered.length === 0) return {};
  return { tools: offered.map(toWireTool), tool_choice: toolChoice };
}

function toWireTool(tool: ModelTool): Record<string, unknown> {
  const fn: Record<string, unknown> = { name: tool.name };
  if (tool.description !== undefined) fn.description = tool.description;
  fn.parameters = tool.parameters ?? { type: 'object', properties: {} };
  return { type: 'function', function: fn };
}

// ---------------------------------------------------------------------------------------------
// Response parsing

interface WireToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface WireChunk {
  choices?: { delta?: { content?: string | null; tool_calls?: WireToolCallDelta[] }; finish_reason?: string | null }[];
  error?: { message?: string; code?: unknown } | string;
}

/**
 * Incremental SSE decoder yielding each event's data. Follows the spec (data lines joined,
 * dispatched on a blank line) so it copes with events split anywhere across network chunks,
 * `\r\n` line ends, and `:` keep-alive comments.
 */
class SseDataParser {
  private buffer = '';
  private data: string[] = [];

  push(text: string): string[] {
    this.buffer += text;
    const lines = this.buffer.split('\n');
    this.buffer = lines.pop() ?? '';
    const out: string[] = [];
    for (const line of lines) this.line(line.endsWith('\r') ? line.slice(0, -1) : line, out);
    return out;
  }

  /** Flushes a final event the server did not terminate with a blank line. */
  end(): string[] {
    const out: string[] = [];
    if (this.buffer) this.line(this.buffer.replace(/\r$/, ''), out);
    this.buffer = '';
    this.line('', out);
    return out;
  }

  private line(line: string, out: string[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    if (colon < 0 || line.slice(0, colon) !== 'data') return;
    const value = line.slice(colon + 1);
    this.data.push(value.startsWith(' ') ? value.slice(1) : value);
  }
}

function parseChunk(data: string): WireChunk {
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    throw new ModelError(`malformed stream chunk: ${truncate(data)}`, true);
  }
  if (typeof chunk !== 'object' || chunk === null) throw new ModelError(`malformed stream chunk: ${truncate(data)}`, true);
  const wire = chunk as WireChunk;
  if (wire.error) {
    const detail = typeof wire.error === 'string' ? wire.error : (wire.error.message ?? JSON.stringify(wire.error));
    const status = typeof wire.error === 'object' && typeof wire.error.code === 'number' ? wire.error.code : undefined;
    throw new ModelError(`backend error mid-stream: ${truncate(detail)}`, status === undefined || isRetryableStatus(status), status);
  }
  return wire;
}

class CompletionAccumulator {
  finishReason: string | undefined;
  private readonly calls = new Map<number, { id?: string; name: string; args: string }>();

  /** Records tool-call fragments and the finish reason; returns the chunk's text deltas. */
  apply(chunk: WireChunk): string[] {
    const choice = chunk.choices?.[0];
    if (!choice) return [];
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    const delta = choice.delta;
    (delta?.tool_calls ?? []).forEach((fragment, position) => {
      // Some servers omit `index` on single-call streams; fall back to array position.
      const index = typeof fragment.index === 'number' ? fragment.index : position;
      const call = this.calls.get(index) ?? { name: '', args: '' };
      if (fragment.id) call.id = fragment.id;
      if (fragment.function?.name) call.name = fragment.function.name;
      if (typeof fragment.function?.arguments === 'string') call.args += fragment.function.arguments;
      this.calls.set(index, call);
    });
    return typeof delta?.content === 'string' && delta.content !== '' ? [delta.content] : [];
  }

  toolCalls(warn?: (message: string) => void): ToolCallRequest[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({
        id: call.id ?? `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
        name: call.name,
        args: parseArgs(call.name, call.args, warn),
      }));
  }
}

function parseArgs(name: string, raw: string, warn?: (message: string) => void): Record<string, unknown> {
  if (raw.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through to the warning
  }
  warn?.(`tool call ${name}: arguments are not a JSON object, using {}: ${truncate(raw)}`);
  return {};
}

function mapFinishReason(reason: string | undefined): FinishReason {
  return reason === 'stop' || reason === 'tool_calls' || reason === 'length' ? reason : 'other';
}

async function httpError(response: Response): Promise<ModelError> {
  return new ModelError(await describeHttpError(response), isRetryableStatus(response.status), response.status);
}
