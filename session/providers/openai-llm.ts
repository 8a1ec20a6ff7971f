/**
 * LanguageModel adapter for any OpenAI-compatible Chat Completions endpoint (OpenAI, LM Studio,
 * llama.cpp server, vLLM, Ollama's /v1). Always streams over SSE and translates the wire chunks
 * into ModelEvents.
 *
 * Abort contract: when `request.signal` aborts, `stream()` stops reading and returns silently
 * without a `finish` event (it never throws an AbortError). Consumers tell "aborted" from
 * "finished" by the missing `finish`.
 */
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
import { Upstream } from './http/upstream.ts';
import { ChunkReader } from './openai-llm-stream.ts';

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

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
/** Made once: the reason a body is cut when its consumer stopped reading (see upstream.ts). */
const STOPPED = Object.freeze(new Error('the stream consumer stopped'));

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
    const reader = new ChunkReader(this.upstream, this.options.onWarning);
    const handle = await this.upstream.stream(
      { path: 'chat/completions', body: JSON.stringify(this.requestBody(request)), contentType: 'application/json', accept: 'text/event-stream', signal },
      reader,
    );
    if (!handle) return;
    // Once [DONE] is in, only the chunked terminator is left: the body is let run to its end (so
    // the connection goes back to the pool) whatever the consumer does next. Before that, an
    // abort, an error or a consumer that stopped early cuts the request.
    let released = false;
    try {
      for (;;) {
        for (let event = reader.next(); event !== undefined; event = reader.next()) {
          // The stream is over ([DONE] or the body's end, read by next()): the connection is let
          // go before the last events are yielded, since the consumer may stop at any of them.
          if (reader.finished && !released) {
            handle.release();
            released = true;
          }
          yield event;
          if (signal.aborted) return;
        }
        if (reader.failure) throw reader.failure;
        if (reader.finished) break;
        if (reader.aborted || signal.aborted) return;
        await reader.wait();
      }
    } finally {
      if (!released) handle.abort(STOPPED);
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
