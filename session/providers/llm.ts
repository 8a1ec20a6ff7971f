/**
 * The LanguageModel port: everything the session core needs from a model, and nothing of any
 * vendor's wire format. Adapters (local, openai) translate to and from it.
 */
import { ProviderError } from './provider-error.ts';

export interface ToolCallRequest {
  /** Call id as the model (or the session) assigned it. */
  id: string;
  name: string;
  /** Parsed arguments; adapters turn malformed model JSON into `{}` plus a warning. */
  args: Record<string, unknown>;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: ToolCallRequest[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** A tool as the model sees it: OpenAI function-tool shape. */
export interface ModelTool {
  name: string;
  description?: string;
  /** JSON Schema object describing the arguments. */
  parameters?: Record<string, unknown>;
}

export type ModelToolChoice =
  | 'auto'
  | 'none'
  | 'required'
  | { allowed: string[] }
  | { tool: string };

export interface ModelRequest {
  messages: ChatMessage[];
  tools: ModelTool[];
  toolChoice: ModelToolChoice;
  temperature?: number;
  /** Overrides the configured model name (think_deeply uses the deep model). */
  model?: string;
  signal: AbortSignal;
}

export type ModelEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool_call'; call: ToolCallRequest }
  /** The provider's own token count for this request, when it reports one (before `finish`). */
  | { type: 'usage'; inputTokens: number; outputTokens: number }
  | { type: 'finish'; reason: 'stop' | 'tool_calls' | 'length' | 'other' };

/** Raised by adapters for any failure of the backend; `publicDetail` is what the client reads. */
export class ModelError extends ProviderError {
  override name = 'ModelError';
}

export interface LanguageModel {
  readonly name: string;
  /**
   * Streams one assistant message. Yields text deltas and complete tool calls, the provider's
   * token usage when it reports it, then exactly one `finish`. Throws ModelError on backend failure and stops promptly when `signal` aborts
   * (throwing an AbortError or simply returning).
   */
  stream(request: ModelRequest): AsyncIterable<ModelEvent>;
}
