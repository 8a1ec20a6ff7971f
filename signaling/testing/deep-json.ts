/**
 * JSON text nested `levels` deep around `leaf`, built as a string: JSON.stringify itself
 * overflows on the depths these tests send.
 */
export function deepJson(levels: number, leaf = '{}'): string {
  return `${'{"a":'.repeat(levels)}${leaf}${'}'.repeat(levels)}`;
}

/** The same nesting with arrays, the cheapest bytes per level. */
export function deepArray(levels: number): string {
  return `${'['.repeat(levels)}${']'.repeat(levels)}`;
}
