import type { ToolDeclaration } from '../../protocol/tools.ts';
import { MAX_BINDING_BYTES, type Binding, type InteractionInput } from './interaction.ts';

export type InteractionCheck =
  | { ok: true; binding: Binding | undefined; dropped: string | undefined }
  | { ok: false; detail: string };

/**
 * The checks the frame schema cannot make (SPEC "Interaction", "Resolver fields"). A fault that
 * makes the whole interaction invalid is refused (error invalid_interaction, nothing changes); a
 * binding whose tool is unknown or ineligible is only dropped, and the ask stands.
 */
export function checkInteraction(interaction: InteractionInput, used: (id: string) => boolean, tools: readonly ToolDeclaration[]): InteractionCheck {
  if (interaction.id !== undefined && used(interaction.id)) {
    return { ok: false, detail: `interaction id "${interaction.id}" was already used in this session; ids are single-use, raise the ask with a fresh id` };
  }
  const binding = interaction.resolver;
  if (!binding) return { ok: true, binding: undefined, dropped: undefined };
  const bytes = Buffer.byteLength(JSON.stringify(binding));
  if (bytes > MAX_BINDING_BYTES) return { ok: false, detail: `the resolver binding is ${bytes} bytes as compact JSON; at most ${MAX_BINDING_BYTES}` };
  const options = new Set(interaction.options ?? []);
  const stray = Object.keys(binding.option_args ?? {}).filter((key) => !options.has(key));
  if (stray.length > 0) {
    return { ok: false, detail: `resolver.option_args keys must be among the options; not offered: ${stray.map((k) => JSON.stringify(k)).join(', ')}` };
  }
  if (interaction.options === undefined && binding.answer_arg === undefined) {
    return { ok: false, detail: 'a free-text ask (no options) with a resolver needs resolver.answer_arg to receive the answer' };
  }
  const problem = bindingProblem(binding, tools);
  return problem ? { ok: true, binding: undefined, dropped: problem } : { ok: true, binding, dropped: undefined };
}

/** Why a binding cannot run (now): its tool must be client-declared and not requires_permission. */
export function bindingProblem(binding: Binding, tools: readonly ToolDeclaration[]): string | undefined {
  const tool = tools.find((t) => t.name === binding.tool);
  if (!tool) return `resolver tool "${binding.tool}" is not a declared client tool`;
  if (tool.requires_permission) return `resolver tool "${binding.tool}" requires permission, which a resolver cannot ask for`;
  return undefined;
}
