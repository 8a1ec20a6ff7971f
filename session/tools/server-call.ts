import type { ToolCallRequest } from '../providers/llm.ts';
import { ServerToolResult, type PartialOutcome, type ServerTool } from './server-tool.ts';
import type { ToolResolution } from './types.ts';
import { LIMITS } from '../protocol/limits.ts';

/** What ToolCalls hands a server call: its cancellation and the paths a client call's frames take. */
export interface ServerCallHandle {
  readonly signal: AbortSignal;
  /** The call's one terminal result; ignored once the call has ended (timeout, cancel). */
  settle(resolution: ToolResolution): void;
  progress(note: string): void;
  partial(content: unknown): PartialOutcome;
}

export interface ServerCallHost {
  session: { id: string; account: string };
  /** A partial result asked for a reply now. */
  replyNow(): void;
  log: { warn(obj: object, msg: string): void };
}

export const INVALID_ARGUMENTS = 'invalid arguments';

/**
 * Checks a model's arguments against a server tool's schema: the parsed arguments, or the
 * resolution the model is told instead (the tool never runs on arguments its schema refuses).
 */
export function parseServerArgs(tool: ServerTool, call: ToolCallRequest): { ok: true; args: unknown } | { ok: false; resolution: ToolResolution } {
  const parsed = tool.parameters.safeParse(call.args);
  if (parsed.success) return { ok: true, args: parsed.data };
  const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`);
  return { ok: false, resolution: { outcome: 'failed', verified: false, content: `${INVALID_ARGUMENTS}: ${issues.join('; ')}` } };
}

/**
 * Runs one server tool call to its resolution: a return value is `succeeded` (verified), a
 * `toolResult(...)` keeps its own outcome, a throw is `failed` with the error's message. Nothing
 * the function does after its call ended (timeout, cancel, session end) reaches the session.
 */
export function executeServerTool(tool: ServerTool, call: ToolCallRequest, args: unknown, handle: ServerCallHandle, host: ServerCallHost): void {
  const context = {
    signal: handle.signal,
    sessionId: host.session.id,
    account: host.session.account,
    callId: call.id,
    progress: (note: string) => handle.progress(String(note).slice(0, LIMITS.progressNoteChars)),
    partial: (content: unknown, options: { reply?: boolean } = {}) => {
      const outcome = handle.partial(content);
      if (outcome === 'ok' && options.reply) host.replyNow();
      return outcome;
    },
  };
  void (async () => {
    try {
      const value = await tool.run(args, context);
      const resolution: ToolResolution = value instanceof ServerToolResult
        ? { outcome: value.outcome, verified: value.verified, content: value.content }
        : { outcome: 'succeeded', verified: true, content: value };
      handle.settle(asJsonResolution(resolution));
    } catch (error) {
      if (handle.signal.aborted) return;
      host.log.warn({ tool: tool.name, call_id: call.id, err: error instanceof Error ? error.stack : String(error) }, 'server tool failed');
      handle.settle({ outcome: 'failed', verified: false, content: error instanceof Error ? error.message : String(error) });
    }
  })();
}

/**
 * A result enters the history as JSON, as a client's tool_result does; one that cannot be
 * (a cycle, a BigInt) or is larger than a client's result may be is a failure of the tool.
 */
function asJsonResolution(resolution: ToolResolution): ToolResolution {
  let json: string | undefined;
  try {
    json = JSON.stringify(resolution.content ?? null) ?? 'null';
  } catch (error) {
    return { outcome: 'failed', verified: false, content: `the tool returned a value that is not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (Buffer.byteLength(json) > LIMITS.toolResultBytes) return { outcome: 'failed', verified: false, content: `the tool's result is over ${LIMITS.toolResultBytes} bytes as JSON` };
  return { ...resolution, content: JSON.parse(json) as unknown };
}
