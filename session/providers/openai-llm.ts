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
import { StringDecoder } from 'node:string_decoder';
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
import { redact } from './http/failure.ts';
import { SseParser } from './http/sse.ts';
import { Upstream, type UpstreamBody } from './http/upstream.ts';

export interface OpenAiLanguageModelOptions {
  /** e.g. `http://127.0.0.1:1234/v1`; a trailing slash is tolerated. */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Bounds the wait for response headers only, so long generations are not cut off. Default 60000. */
  timeoutMs?: number;
  /** Longest silence between two stream chunks once the answer started. Default 30000. */
  idleTimeoutMs?: number;
  /** Connections kept open to the endpoint. Default 256. */
  connections?: number;
  /**
   * Ask for the token usage chunk (`stream_options.include_usage`, default true); servers that
   * refuse the field need false, and their tokens are then estimated.
   */
  streamUsage?: boolean;
  /** Receives non-fatal oddities (e.g. malformed tool arguments the port turns into `{}`). */
  onWarning?: (message: string) => void;
}

type FinishReason = Extract<ModelEvent, { type: 'finish' }>['reason'];

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

export class OpenAiLanguageModel implements LanguageModel {
  readonly name: string;
  private readonly upstream: Upstream<ModelError>;

  constructor(private readonly options: OpenAiLanguageModelOptions) {
    this.name = `openai:${options.model}`;
    this.upstream = new Upstream('the model', ModelError, {
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      firstByteMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      idleMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      ...(options.connections === undefined ? {} : { connections: options.connections }),
    });
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const { signal } = request;
    const body = await this.upstream.request({
      path: 'chat/completions',
      body: JSON.stringify(this.requestBody(request)),
      contentType: 'application/json',
      accept: 'text/event-stream',
      signal,
    });
    if (!body) return;
    let complete = false;
    try {
      yield* this.readEvents(body, signal);
      complete = true;
    } finally {
      // After [DONE] the rest of the body (the chunked terminator) is read in the background so
      // the connection goes back to the pool; otherwise (an abort, an error, a consumer that
      // stopped early) it is cut.
      if (complete) this.upstream.release(body);
      else body.destroy();
    }
  }

  close(): Promise<void> {
    return this.upstream.close();
  }

  private requestBody(request: ModelRequest): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: request.model ?? this.options.model,
      messages: request.messages.map(toWireMessage),
      stream: true,
    };
    if (this.options.streamUsage !== false) body.stream_options = { include_usage: true };
    if (request.temperature !== undefined) body.temperature = request.temperature;
    return { ...body, ...toolFields(request.tools, request.toolChoice) };
  }

  private async *readEvents(body: UpstreamBody, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    // undici's body ignores setEncoding: decode here, keeping characters split across reads whole.
    const decoder = new StringDecoder('utf8');
    const sse = new SseParser();
    const acc = new CompletionAccumulator();
    const payloads: string[] = [];
    let sawDone = false;
    const iterator = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    while (!sawDone) {
      let read: IteratorResult<Buffer>;
      try {
        read = await iterator.next();
      } catch (error) {
        if (signal.aborted) return;
        throw this.upstream.bodyFailure(error);
      }
      if (signal.aborted) return;
      payloads.length = 0;
      if (read.done) {
        sse.push(decoder.end(), payloads);
        sse.end(payloads);
      } else {
        sse.push(decoder.write(read.value), payloads);
      }
      for (const data of payloads) {
        if (data === '[DONE]') {
          sawDone = true;
          break;
        }
        for (const delta of acc.apply(this.parseChunk(data))) yield { type: 'text', delta };
        if (signal.aborted) return;
      }
      if (read.done) break;
    }
    if (!sawDone && acc.finishReason === undefined) throw this.upstream.fail('ended_early', 'the stream ended without a finish_reason or [DONE]');
    for (const call of acc.toolCalls(this.options.onWarning)) yield { type: 'tool_call', call };
    if (acc.usage) yield { type: 'usage', inputTokens: acc.usage.input, outputTokens: acc.usage.output };
    yield { type: 'finish', reason: mapFinishReason(acc.finishReason) };
  }

  private parseChunk(data: string): WireChunk {
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw this.upstream.fail('malformed', `stream chunk is not JSON: ${data}`);
    }
    if (typeof chunk !== 'object' || chunk === null) throw this.upstream.fail('malformed', `stream chunk is not an object: ${data}`);
    const wire = chunk as WireChunk;
    if (wire.error) {
      const detail = typeof wire.error === 'string' ? wire.error : (wire.error.message ?? JSON.stringify(wire.error));
      const status = typeof wire.error === 'object' && typeof wire.error.code === 'number' ? wire.error.code : undefined;
      // An error event inside a 200 stream: retryable unless its code says otherwise.
      throw this.upstream.fail('upstream_error', detail, status);
    }
    return wire;
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
  /** With stream_options.include_usage: on the last chunk (whose choices are empty). */
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
  error?: { message?: string; code?: unknown } | string;
}

class CompletionAccumulator {
  finishReason: string | undefined;
  usage: { input: number; output: number } | undefined;
  private readonly calls = new Map<number, { id?: string; name: string; args: string }>();

  /** Records tool-call fragments and the finish reason; returns the chunk's text deltas. */
  apply(chunk: WireChunk): string[] {
    const { usage } = chunk;
    if (usage && isCount(usage.prompt_tokens) && isCount(usage.completion_tokens)) {
      this.usage = { input: usage.prompt_tokens, output: usage.completion_tokens };
    }
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
  warn?.(`tool call ${name}: arguments are not a JSON object, using {}: ${redact(raw)}`);
  return {};
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function mapFinishReason(reason: string | undefined): FinishReason {
  return reason === 'stop' || reason === 'tool_calls' || reason === 'length' ? reason : 'other';
}
