import { LIMITS } from './limits.ts';

export type BoundedJson =
  | { ok: true; value: unknown }
  | { ok: false; reason: 'not_json'; detail: string }
  /** `top` is the parsed value: read its top-level fields only, never copy or serialise it. */
  | { ok: false; reason: 'too_deep'; detail: string; top: unknown };

/**
 * JSON.parse with a bound on nesting, for everything a client (or a model) sends us. V8 parses
 * deep JSON fine, but later copies and serialisations (structuredClone, JSON.stringify) recurse
 * and overflow the stack on a few thousand levels: 12 KB of brackets in a tool schema ended the
 * process. The bound is checked once here, at the parse boundary, so no copy further in needs to.
 */
export function parseBoundedJson(text: string, maxDepth: number = LIMITS.jsonDepth): BoundedJson {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not_json', detail: 'not valid JSON' };
  }
  const depth = depthExceeding(value, maxDepth);
  if (depth !== undefined) return { ok: false, reason: 'too_deep', detail: `JSON nested deeper than ${maxDepth} levels`, top: value };
  return { ok: true, value };
}

/** True when a parsed value (e.g. a model's tool arguments) nests deeper than `maxDepth`. */
export function nestsTooDeep(value: unknown, maxDepth: number = LIMITS.jsonDepth): boolean {
  return depthExceeding(value, maxDepth) !== undefined;
}

/** Walks the value without recursion; returns the first depth past the bound, if any. */
function depthExceeding(root: unknown, maxDepth: number): number | undefined {
  if (typeof root !== 'object' || root === null) return undefined;
  const stack: Array<{ value: object; depth: number }> = [{ value: root, depth: 1 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (depth > maxDepth) return depth;
    const children = Array.isArray(value) ? value : Object.values(value);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: depth + 1 });
    }
  }
  return undefined;
}
