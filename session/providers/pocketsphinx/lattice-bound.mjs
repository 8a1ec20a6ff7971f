// Mid-segment, ps_get_lattice (ngram_search_lattice, Debian's 5prealpha) looks for the lattice's
// end among the word exits of the last searched frame: from bp_table_idx[n_frame - 1] up to
// bp_table_idx[n_frame]. The search writes that upper entry only when it searches the next frame
// (or ends the segment). Until then it holds whatever an earlier, longer segment left there, so
// the lattice's end word, and the posterior end of turn reads, depended on what that pooled
// recogniser decoded before, possibly for another session; past every earlier segment it is
// uninitialised memory, and ps_get_lattice segfaults. Writing the entry first, with the value
// the search itself writes there next (bpidx, its first free backpointer), makes the lattice
// the one the segment so far defines, whatever came before, at any segment length.
//
// The structures are pocketsphinx's internals (ngram_search.h, pocketsphinx_internal.h), so the
// layout is checked against what the decoder must hold before anything is written: the search's
// copies of the decoder's config, acoustic model and dictionary, its pass flags, and a
// backpointer index that starts at 0 and never decreases up to bpidx. A library whose layout
// differs gets no mid-segment lattice (lastWord falls back to the last finished segment's word).
import koffi from 'koffi';

const ptr = 'void*';

/** The head of ps_decoder_t, up to its current search. */
const DecoderHead = koffi.struct({ config: ptr, refcount: 'int', acmod: ptr, dict: ptr, d2p: ptr, lmath: ptr, searches: ptr, search: ptr });

/** ps_search_t of pocketsphinx 5prealpha (with the search's type and name). */
const SearchBase = koffi.struct({
  vt: ptr, type: ptr, name: ptr, pls: ptr, config: ptr, acmod: ptr, dict: ptr, d2p: ptr, hyp_str: ptr, dag: ptr, last_link: ptr,
  post: 'int32', n_words: 'int32', start_wid: 'int32', silence_wid: 'int32', finish_wid: 'int32',
});

/** ngram_search_t up to the backpointer index. */
const NgramSearch = koffi.struct({
  base: SearchBase, lmset: ptr, hmmctx: ptr, fwdtree: 'uint8', fwdflat: 'uint8', bestpath: 'uint8', done: 'uint8',
  chan_alloc: ptr, root_chan_alloc: ptr, latnode_alloc: ptr, root_chan: ptr,
  n_root_chan_alloc: 'int32', n_root_chan: 'int32', n_nonroot_chan: 'int32', max_nonroot_chan: 'int32',
  rhmm_1ph: ptr, word_chan: ptr, word_active: ptr, homophone_set: ptr, single_phone_wid: ptr, n_1ph_words: 'int32', n_1ph_LMwords: 'int32',
  active_chan_list: ptr, n_active_chan: koffi.array('int32', 2), active_word_list: ptr, n_active_word: koffi.array('int32', 2),
  lastphn_cand: ptr, n_lastphn_cand: 'int32', last_ltrans: ptr, cand_sf_alloc: 'int32', cand_sf: ptr, bestbp_rc: ptr,
  bp_table: ptr, bpidx: 'int32', bp_table_size: 'int32', bscore_stack: ptr, bss_head: 'int32', bscore_stack_size: 'int32',
  n_frame_alloc: 'int32', n_frame: 'int32', bp_table_idx: ptr,
});

const same = (a, b) => a !== null && b !== null && koffi.address(a) === koffi.address(b);

/**
 * The search of one decoder (`ps`), if its layout is the one above; undefined otherwise.
 * Checked once per decoder, at load, when nothing is searched yet.
 */
export function ngramSearchOf(ps) {
  const head = koffi.decode(ps, DecoderHead);
  if (!head.search) return undefined;
  const search = koffi.decode(head.search, NgramSearch);
  const { base } = search;
  const fits =
    same(base.config, head.config) &&
    same(base.acmod, head.acmod) &&
    same(base.dict, head.dict) &&
    search.fwdtree === 1 &&
    search.fwdflat <= 1 &&
    search.bestpath <= 1 &&
    search.n_frame_alloc >= 256 &&
    search.bp_table_size > 0 &&
    search.bp_table_idx !== null;
  return fits ? head.search : undefined;
}

/**
 * Writes the end of the last searched frame's word exits into the backpointer index (see the top
 * of this file). False when the index does not read as one (nothing is written then), or when
 * the segment has filled its allocated index (the search grows it at the next frame).
 */
export function boundLastFrame(search) {
  const s = koffi.decode(search, NgramSearch);
  const n = s.n_frame;
  if (n <= 0 || n >= s.n_frame_alloc || s.bpidx < 0 || s.bpidx > s.bp_table_size) return false;
  const index = koffi.decode(s.bp_table_idx, 'int32', n);
  if (index[0] !== 0) return false;
  for (let f = 1; f < n; f += 1) if (index[f] < index[f - 1]) return false;
  if (index[n - 1] > s.bpidx) return false;
  koffi.encode(s.bp_table_idx, n * 4, 'int32', s.bpidx);
  return true;
}
