import { z } from 'zod';
import { TOOL_NAME_PATTERN } from '../protocol/common.ts';
import type { ModelTool } from '../providers/llm.ts';
import { isManaged } from './tool-set.ts';
import type { ToolOutcome } from './types.ts';

/**
 * Server-side tools: defined in Node with a zod schema and an async function, run by the server
 * itself. They keep the client tools' semantics (outcome and verification, timeout, cancellation,
 * progress, partial results, permission) but never appear on the wire as calls: no `tool_call`,
 * no `tool_cancel`; a client cannot answer, cancel or defer them.
 */

/** What a partial result came to: accepted, or refused for the reason a client would be told. */
export type PartialOutcome = 'ok' | 'partial_too_large' | 'partial_limit' | 'call_closed';

export interface ServerToolContext {
  /** Aborted when the call times out, is cancelled, or its session ends: stop work then. */
  readonly signal: AbortSignal;
  readonly sessionId: string;
  /** The account of the key the session authenticated with. */
  readonly account: string;
  readonly callId: string;
  /** As `tool_progress`: a note the model sees in its context. */
  progress(note: string): void;
  /** As `tool_partial_result`: at most 2 KiB of JSON, 8 per call; `reply` asks for a reply now. */
  partial(content: unknown, options?: { reply?: boolean }): PartialOutcome;
}

/** A result with an outcome other than "succeeded and verified" (see `toolResult`). */
export class ServerToolResult {
  constructor(
    readonly outcome: ToolOutcome,
    readonly content: unknown,
    readonly verified: boolean,
  ) {}
}

/**
 * The outcome a tool reports when it did not simply succeed: `failed`, `unknown`… (a plain
 * return value means `succeeded` and verified; a throw means `failed` with the error's message).
 */
export function toolResult(result: { outcome: ToolOutcome; content: unknown; verified?: boolean }): ServerToolResult {
  return new ServerToolResult(result.outcome, result.content, result.outcome === 'succeeded' && (result.verified ?? true));
}

export interface ServerTool<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description?: string;
  /** A zod object schema: the model sees it as JSON Schema; the model's arguments are parsed with it. */
  readonly parameters: S;
  /** Held for the user's approval (`permission_pending`) before it runs. */
  readonly requiresPermission?: boolean;
  /** Per-call timeout; default TOOL_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  run(args: z.output<S>, context: ServerToolContext): unknown;
}

/** Types a tool's arguments from its schema (an identity function for inference). */
export function defineTool<S extends z.ZodType>(tool: ServerTool<S>): ServerTool<S> {
  return tool;
}

/** The server's tools, checked once when the server is created. */
export class ServerToolSet {
  private readonly byName = new Map<string, { tool: ServerTool; model: ModelTool }>();

  /** Throws a TypeError naming the tool for a bad name, a duplicate or a schema that is not an object. */
  constructor(tools: readonly ServerTool[] = []) {
    for (const tool of tools) {
      const where = `server tool "${tool.name}"`;
      if (!TOOL_NAME_PATTERN.test(tool.name)) throw new TypeError(`${where}: names are 1 to 64 letters, digits, _ or -`);
      if (isManaged(tool.name)) throw new TypeError(`${where}: the name is reserved for a managed tool`);
      if (this.byName.has(tool.name)) throw new TypeError(`${where}: defined twice`);
      if (tool.timeoutMs !== undefined && !(Number.isInteger(tool.timeoutMs) && tool.timeoutMs >= 100)) throw new TypeError(`${where}: timeoutMs must be an integer ≥ 100`);
      this.byName.set(tool.name, { tool, model: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), parameters: jsonSchemaOf(tool, where) } });
    }
  }

  get(name: string): ServerTool | undefined {
    return this.byName.get(name)?.tool;
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  modelTools(): ModelTool[] {
    return [...this.byName.values()].map((entry) => entry.model);
  }
}

function jsonSchemaOf(tool: ServerTool, where: string): Record<string, unknown> {
  let schema: Record<string, unknown>;
  try {
    schema = z.toJSONSchema(tool.parameters, { io: 'input' }) as Record<string, unknown>;
  } catch (error) {
    throw new TypeError(`${where}: parameters cannot be expressed as JSON Schema (${error instanceof Error ? error.message : String(error)})`);
  }
  if (schema.type !== 'object') throw new TypeError(`${where}: parameters must be a zod object schema`);
  const { $schema: _dialect, ...forModel } = schema;
  return forModel;
}
