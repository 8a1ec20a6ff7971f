/** Types of lattice-bound.mjs (plain JavaScript: it runs in recogniser threads). */

/** koffi field types, by field name, in order. */
export type Fields = Record<string, unknown>;

/** The field lists of ps_decoder_t's head, ps_search_t and ngram_search_t after its base. */
export declare const FIELDS: { head: Fields; base: Fields; search: Fields };

/** koffi structures built from such field lists. */
export interface Layout {
  head: unknown;
  base: unknown;
  search: unknown;
}

export declare function layoutOf(fields: { head: Fields; base: Fields; search: Fields }): Layout;

/** A decoder's n-gram search with the layout it was checked against. */
export interface NgramSearch {
  pointer: unknown;
  layout: Layout;
}

export declare function ngramSearchOf(ps: unknown, layout?: Layout): NgramSearch | undefined;

export declare function boundLastFrame(search: NgramSearch): boolean;
