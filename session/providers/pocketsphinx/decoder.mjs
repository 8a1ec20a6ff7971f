// The pocketsphinx decoder through its C API (Debian's libpocketsphinx3), called with koffi: a
// maintained FFI whose npm package ships its native part prebuilt, so nothing is compiled at
// install. A Decoder keeps its models loaded (~0.4 s and ~90 MB each) and decodes utterance
// after utterance, streaming: audio is searched as it arrives, so the end of an utterance only
// finishes the last frames, and a partial hypothesis of the utterance so far is always at hand.
// Inside an utterance it segments on pocketsphinx's own voice detection exactly as
// pocketsphinx_continuous does (the recogniser we used before), so transcripts stay the same:
// audio it never hears as speech (a click, a noise burst) gives no words at all.
// Plain JavaScript: it runs in recogniser threads, which then need no TypeScript loader.
import koffi from 'koffi';
import { pocketsphinxLibraries } from './libraries.mjs';
import { boundLastFrame, ngramSearchOf } from './lattice-bound.mjs';
import { sentenceEndProbability } from './sentence-end.mjs';

export const MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';

const OPTIONS = ['-hmm', `${MODEL_DIR}/en-us`, '-lm', `${MODEL_DIR}/en-us.lm.bin`, '-dict', `${MODEL_DIR}/cmudict-en-us.dict`, '-logfn', '/dev/null'];

/**
 * Search settings, as pocketsphinx command-line pairs after OPTIONS. Its default lets up to 30,000
 * HMMs stay active per frame; a cap of 5,000 (the beams stay as they are) cuts the CPU per second
 * of speech for the same word error rate on our clips. Tighter caps save more but change what the
 * search hears at a pause (a word cut off mid-way becomes a whole, likelier word), which moves the
 * last-word posterior and the sentence-end probability end of turn was tuned on
 * (bench/asr-settings.ts measures them side by side).
 */
export const SEARCH_SETTINGS = ['-maxhmmpf', '5000'];

let api;

function load() {
  if (api) return api;
  const { ps, sb } = pocketsphinxLibraries();
  api = {
    psArgs: ps.func('void* ps_args()'),
    cmdLnInit: sb.func('void* cmd_ln_init(void* inout, void* defn, int strict, ...)'),
    psInit: ps.func('void* ps_init(void* config)'),
    psFree: ps.func('int ps_free(void* ps)'),
    cmdLnFree: sb.func('int cmd_ln_free_r(void* config)'),
    startStream: ps.func('int ps_start_stream(void* ps)'),
    startUtt: ps.func('int ps_start_utt(void* ps)'),
    processRaw: ps.func('int ps_process_raw(void* ps, const int16_t* data, size_t n, int no_search, int full_utt)'),
    endUtt: ps.func('int ps_end_utt(void* ps)'),
    getHyp: ps.func('const char* ps_get_hyp(void* ps, _Out_ int32_t* score)'),
    getInSpeech: ps.func('uint8_t ps_get_in_speech(void* ps)'),
    getFeat: ps.func('void* ps_get_feat(void* ps)'),
    getLattice: ps.func('void* ps_get_lattice(void* ps)'),
    getLm: ps.func('void* ps_get_lm(void* ps, const char* name)'),
    bestpath: ps.func('void* ps_lattice_bestpath(void* dag, void* lmset, float lwf, float ascale)'),
    posterior: ps.func('int32_t ps_lattice_posterior(void* dag, void* lmset, float ascale)'),
    linkPred: ps.func('void* ps_latlink_pred(void* link)'),
    linkWord: ps.func('const char* ps_latlink_baseword(void* dag, void* link)'),
    linkProb: ps.func('int32_t ps_latlink_prob(void* dag, void* link, _Out_ int32_t* ascr)'),
    latticeLogmath: ps.func('void* ps_lattice_get_logmath(void* dag)'),
    logmathExp: sb.func('double logmath_exp(void* lmath, int32_t p)'),
    cmnLiveSet: sb.func('void cmn_live_set(void* cmn, const float* vec)'),
    // sphinxbase's feat_t up to cmn_struct, and cmn_t (Debian's 5prealpha headers, float mfcc_t).
    Feat: koffi.struct({ refcount: 'int', name: 'void*', cepsize: 'int32', n_stream: 'int32', stream_len: 'void*', window_size: 'int32', n_sv: 'int32', sv_len: 'void*', subvecs: 'void*', sv_buf: 'void*', sv_dim: 'int32', cmn: 'int', varnorm: 'int32', agc: 'int', compute_feat: 'void*', cmn_struct: 'void*' }),
    Cmn: koffi.struct({ cmn_mean: 'void*', cmn_var: 'void*', sum: 'void*', nframe: 'int32', veclen: 'int32' }),
  };
  return api;
}

export class Decoder {
  #config;
  #ps;
  #cmn;
  #initialMean;
  #inUtterance = false;
  /** pocketsphinx heard speech in the current segment. */
  #inSegment = false;
  /** Transcripts of the utterance's finished segments. */
  #segments = [];
  /** The last word of the last finished segment, with its posterior. */
  #lastWord;
  /** The n-gram search, when its layout is known: then a lattice can be built mid-segment (lattice-bound.mjs). */
  #search;

  constructor(settings = SEARCH_SETTINGS) {
    const a = load();
    const config = a.cmdLnInit(null, a.psArgs(), 1, ...[...OPTIONS, ...settings].flatMap((value) => ['str', value]), 'str', null);
    if (!config) throw new Error('pocketsphinx rejected its configuration (is pocketsphinx-en-us installed?)');
    this.#config = config;
    this.#ps = a.psInit(config);
    if (!this.#ps) {
      this.free();
      throw new Error(`pocketsphinx could not load its model from ${MODEL_DIR}`);
    }
    this.#search = ngramSearchOf(this.#ps);
    // The cepstral mean adapts to the audio it hears; kept across utterances it would carry one
    // speaker's (or session's) channel into the next. Each utterance starts from the initial
    // mean, as a freshly loaded decoder would.
    this.#cmn = koffi.decode(a.getFeat(this.#ps), a.Feat).cmn_struct;
    const cmn = koffi.decode(this.#cmn, a.Cmn);
    this.#initialMean = new Float32Array(koffi.decode(cmn.cmn_mean, 'float', cmn.veclen));
  }

  start() {
    if (this.#inUtterance) this.end();
    this.#segments = [];
    this.#lastWord = undefined;
    load().cmnLiveSet(this.#cmn, this.#initialMean);
    // Likewise its noise estimate: pooled, this recogniser's last utterance was another session's.
    if (load().startStream(this.#ps) < 0) throw new Error('pocketsphinx could not start a stream');
    this.#startSegment();
    this.#inUtterance = true;
  }

  /** Searches these samples now (Int16Array, 16 kHz mono). */
  process(samples) {
    if (!this.#inUtterance || samples.length === 0) return;
    const a = load();
    if (a.processRaw(this.#ps, samples, samples.length, 0, 0) < 0) throw new Error('pocketsphinx failed to process audio');
    const speech = a.getInSpeech(this.#ps) !== 0;
    if (speech) this.#inSegment = true;
    else if (this.#inSegment) {
      this.#endSegment();
      this.#startSegment();
    }
  }

  /** The best hypothesis of the utterance so far ('' when nothing was recognised). */
  partial() {
    if (!this.#inUtterance) return '';
    const current = this.#inSegment ? hyp(this.#ps) : '';
    return [...this.#segments, current].filter(Boolean).join(' ');
  }

  /** The last word heard so far and pocketsphinx's posterior for it (undefined before any word). */
  lastWord() {
    if (!this.#inUtterance) return undefined;
    if (!this.#inSegment) return this.#lastWord;
    return this.#search && boundLastFrame(this.#search) ? (lastWordPosterior(this.#ps) ?? this.#lastWord) : undefined;
  }

  /** How likely a sentence ends after `text` (default: the words so far), by the language model (0–1). */
  sentenceEnd(text = this.partial()) {
    return sentenceEndProbability(this.#ps, text);
  }

  /**
   * Frees the models. A thread's exit does not: a recogniser thread closed without this (one the
   * idle reaper retires, say) left its ≈ 95 MB allocated in the process for good.
   */
  free() {
    const a = load();
    if (this.#ps) a.psFree(this.#ps);
    // ps_init keeps a reference of its own to the configuration, which ps_free drops: this is ours.
    if (this.#config) a.cmdLnFree(this.#config);
    this.#ps = undefined;
    this.#config = undefined;
    this.#search = undefined;
    this.#inUtterance = false;
  }

  /** Ends the utterance; returns its final transcript. */
  end() {
    if (!this.#inUtterance) return '';
    this.#inUtterance = false;
    this.#endSegment();
    return this.#segments.filter(Boolean).join(' ');
  }

  #startSegment() {
    if (load().startUtt(this.#ps) < 0) throw new Error('pocketsphinx could not start an utterance');
    this.#inSegment = false;
  }

  #endSegment() {
    const a = load();
    if (a.endUtt(this.#ps) < 0) throw new Error('pocketsphinx could not end the utterance');
    if (this.#inSegment) {
      this.#segments.push(hyp(this.#ps));
      this.#lastWord = lastWordPosterior(this.#ps) ?? this.#lastWord;
    }
    this.#inSegment = false;
  }
}

function hyp(ps) {
  return (load().getHyp(ps, [0]) ?? '').trim();
}

/** Fillers and silences pocketsphinx puts in a path: not words. */
const FILLER = /^(<.*>|\[.*\]|\+\+.*\+\+)$/;
/** pocketsphinx's defaults: -bestpathlw 9.5 over -lw 6.5, acoustic scale 1 / -ascale 20. */
const BESTPATH_LW_RATIO = 9.5 / 6.5;
const ASCALE = 1 / 20;

/**
 * Posterior of the last word of the search so far (0–1) from its word lattice, as pocketsphinx
 * computes for a final result but mid-utterance; undefined without a lattice or a word.
 */
export function lastWordPosterior(ps) {
  const a = load();
  const dag = a.getLattice(ps);
  if (!dag) return undefined;
  const lm = a.getLm(ps, '_default');
  let link = a.bestpath(dag, lm, BESTPATH_LW_RATIO, ASCALE);
  if (!link) return undefined;
  a.posterior(dag, lm, ASCALE);
  for (; link; link = a.linkPred(link)) {
    const word = a.linkWord(dag, link);
    if (word && !FILLER.test(word)) return { word, posterior: a.logmathExp(a.latticeLogmath(dag), a.linkProb(dag, link, [0])) };
  }
  return undefined;
}
