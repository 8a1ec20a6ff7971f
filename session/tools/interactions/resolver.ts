import type { ToolDeclaration } from '../../protocol/tools.ts';
import { randomId } from '../../ids.ts';
import type { ToolCallRequest } from '../../providers/llm.ts';
import type { ToolCalls } from '../tool-calls.ts';
import type { ToolResolution } from '../types.ts';
import type { Ask, Binding } from './interaction.ts';
import { bindingProblem } from './validate-interaction.ts';

export interface ResolverDeps {
  calls: ToolCalls;
  clientTools(): ToolDeclaration[];
  defaultTimeoutMs: number;
}

/**
 * SPEC: the final call is args plus option_args[chosen option]; a free-text answer goes into
 * answer_arg. (An option ask whose binding names answer_arg gets the chosen option there too.)
 */
export function resolverArgs(binding: Binding, decision: { choice?: string; answer?: string }): Record<string, unknown> {
  const args: Record<string, unknown> = { ...(binding.args ?? {}) };
  if (decision.choice !== undefined) Object.assign(args, binding.option_args?.[decision.choice] ?? {});
  const value = decision.choice ?? decision.answer;
  if (binding.answer_arg !== undefined && value !== undefined) args[binding.answer_arg] = value;
  return args;
}

/** The binding if it can still run with the tools declared now; otherwise it is dropped. */
export function liveBinding(ask: Ask, tools: readonly ToolDeclaration[]): Binding | undefined {
  if (ask.binding && bindingProblem(ask.binding, tools)) ask.binding = undefined;
  return ask.binding;
}

/**
 * Runs the bound tool through the normal tool_call path (tool_call frame, its own timeout, a
 * tool_result from the host). Resolves with the call's outcome, or "still running" when the
 * turn stops waiting (`signal`).
 */
export async function runResolver(
  deps: ResolverDeps,
  binding: Binding,
  args: Record<string, unknown>,
  signal: AbortSignal,
  started: (request: ToolCallRequest) => void,
): Promise<ToolResolution> {
  const declared = deps.clientTools().find((t) => t.name === binding.tool);
  if (!declared) return { outcome: 'failed', verified: false, content: `the resolver tool ${binding.tool} is no longer declared` };
  const request: ToolCallRequest = { id: randomId('call', 8), name: binding.tool, args };
  started(request);
  return deps.calls.run(request, { timeoutMs: declared.timeout_ms ?? deps.defaultTimeoutMs, deferrable: declared.deferrable === true }, signal);
}
