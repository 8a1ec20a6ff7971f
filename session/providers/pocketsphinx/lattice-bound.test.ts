import koffi from 'koffi';
import { afterEach, describe, expect, it } from 'vitest';
import { boundLastFrame, FIELDS, layoutOf, ngramSearchOf, type Fields } from './lattice-bound.mjs';

/**
 * lattice-bound.mjs's layout check, on memory laid out as Debian's libpocketsphinx3
 * (0.8+5prealpha+1-15) leaves a decoder after ps_init. The offsets below are read from that
 * library's machine code, not from our structures (objdump -d): ps_get_lattice loads
 * ps->search at 0x38; ps_search_init stores type 0x08, config 0x20, acmod 0x28, dict 0x30;
 * ngram_search_init sets fwdtree/fwdflat/bestpath 0x80-0x82, bp_table_size 0x144,
 * n_frame_alloc 0x158 = 256 and the index 0x160; ngram_search_mark_bptable writes
 * index[frame] = bpidx (0x140); ngram_fwdtree_search counts n_frame at 0x15c. Here a wrong
 * layout can write only into memory the test owns, and the entry past the index is a canary.
 */
describe('the backpointer-index write (lattice-bound.mjs)', () => {
  const FRAMES = 256;
  const CANARY = 0x5a5a5a5a;
  const owned: unknown[] = [];
  const alloc = (bytes: number): unknown => {
    const p = koffi.alloc('uint8', bytes);
    koffi.encode(p, 0, koffi.array('uint8', bytes), new Array<number>(bytes).fill(0));
    owned.push(p);
    return p;
  };
  afterEach(() => owned.splice(0).forEach((p) => koffi.free(p)));

  /** A decoder head and a fresh n-gram search; `index` is bp_table_idx[-1 .. FRAMES], the last a canary. */
  function fresh() {
    const [config, acmod, dict, searches] = [alloc(8), alloc(8), alloc(8), alloc(8)];
    const type = alloc(8);
    koffi.encode(type, 0, koffi.array('uint8', 6), [...Buffer.from('ngram\0')]);
    const search = alloc(0x200);
    const put = (at: number, kind: string, value: unknown): void => koffi.encode(search, at, kind, value);
    put(0x08, 'void*', type);
    put(0x20, 'void*', config);
    put(0x28, 'void*', acmod);
    put(0x30, 'void*', dict);
    for (const at of [0x80, 0x81, 0x82]) put(at, 'uint8', 1);
    put(0x144, 'int32', 5000);
    put(0x154, 'int32', 100000);
    put(0x158, 'int32', FRAMES);
    const index = alloc(4 * (FRAMES + 2));
    koffi.encode(index, 4 * (FRAMES + 1), 'int32', CANARY);
    put(0x160, 'void*', pointerAt(index, 4));
    const ps = alloc(0x40);
    koffi.encode(ps, 0x00, 'void*', config);
    koffi.encode(ps, 0x10, 'void*', acmod);
    koffi.encode(ps, 0x18, 'void*', dict);
    koffi.encode(ps, 0x30, 'void*', searches);
    koffi.encode(ps, 0x38, 'void*', search);
    /** A search that has searched `exits.length` frames, frame f's word exits from exits[f], bpidx free. */
    const searched = (exits: number[], bpidx: number): void => {
      if (exits.length > 0) koffi.encode(index, 4, koffi.array('int32', exits.length), exits);
      put(0x15c, 'int32', exits.length);
      put(0x140, 'int32', bpidx);
    };
    const entries = (): number[] => Array.from(koffi.decode(index, 'int32', FRAMES + 2) as Int32Array);
    return { ps, searched, entries };
  }

  /** index + offset as a pointer koffi can store (the pointer the search shifts by one entry). */
  function pointerAt(base: unknown, offset: number): unknown {
    const cell = alloc(8);
    koffi.encode(cell, 0, 'uint64', koffi.address(base) + BigInt(offset));
    return koffi.decode(cell, 'void*');
  }

  it("accepts Debian's layout and writes exactly the next frame's entry, and nothing at a full index", () => {
    const { ps, searched, entries } = fresh();
    const search = ngramSearchOf(ps);
    expect(search).toBeDefined();
    searched([0, 2, 2, 5], 9);
    const before = entries();
    expect(boundLastFrame(search!)).toBe(true);
    const after = entries();
    // entries[0] is index -1: the write lands on index 4 (entries[5]), with bpidx.
    expect(after.map((v, i) => (v === before[i] ? null : [i - 1, v])).filter(Boolean)).toEqual([[4, 9]]);
    searched(Array.from({ length: FRAMES }, (_, f) => f), FRAMES);
    const full = entries();
    expect(boundLastFrame(search!)).toBe(false);
    expect(entries()).toEqual(full);
    expect(entries().at(-1)).toBe(CANARY);
  });

  const without = (fields: Fields, name: string): Fields => Object.fromEntries(Object.entries(fields).filter(([key]) => key !== name));
  const shifted: Record<string, typeof FIELDS> = {
    'one int32 short before the frame counters (bscore_stack_size missing)': { ...FIELDS, search: without(FIELDS.search, 'bscore_stack_size') },
    'one int32 more before the frame counters': { ...FIELDS, search: { ...without(FIELDS.search, 'bp_table_idx'), extra: 'int32', bp_table_idx: 'void*' } },
    'n_frame and n_frame_alloc swapped': { ...FIELDS, search: { ...without(without(without(FIELDS.search, 'n_frame_alloc'), 'n_frame'), 'bp_table_idx'), n_frame: 'int32', n_frame_alloc: 'int32', bp_table_idx: 'void*' } },
    "ps_search_t without type and name (Mozilla's import)": { ...FIELDS, base: without(without(FIELDS.base, 'type'), 'name') },
  };
  for (const [name, fields] of Object.entries(shifted)) {
    it(`refuses a layout ${name}, and writes nothing`, () => {
      const { ps, searched, entries } = fresh();
      const search = ngramSearchOf(ps, layoutOf(fields));
      // Were it accepted: a segment start (nothing searched, an index of zeros) is where it wrote.
      searched([], 0);
      if (search) boundLastFrame(search);
      expect(entries().at(-1)).toBe(CANARY);
      expect(search).toBeUndefined();
    });
  }
});
