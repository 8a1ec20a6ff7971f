// How likely the sentence ends after the words so far, by the recogniser's own trigram language
// model (en-us.lm.bin, the decoder's, so nothing more is loaded): P(</s> | last two words). A
// recogniser that is wrong but sure of its last word at a pause ("could you tell me they", "we
// need chairs tables and then") still leaves words a sentence rarely ends on; the word rules list
// only the commonest such words, the model knows all of them. A few microseconds: two lookups.
// Plain JavaScript, like decoder.mjs: it runs in recogniser threads.
import { pocketsphinxLibraries } from './libraries.mjs';

let bound;

function bind() {
  if (bound) return bound;
  const { ps, sb } = pocketsphinxLibraries();
  // ngram_probv is unweighted: the decoder's language weight and word insertion penalty are not in it.
  bound = [ps.func('void* ps_get_lm(void* ps, const char* name)'), ps.func('void* ps_get_logmath(void* ps)'), sb.func('int32_t ngram_probv(void* model, const char* word, ...)'), sb.func('double logmath_exp(void* lmath, int32_t p)')];
  return bound;
}

/** The recogniser's words: lower case, its fillers ("<sil>", "[noise]") and alternates ("(2)") dropped. */
function lmWords(text) {
  return text
    .toLowerCase()
    .split(/\s+/)
    .map((w) => w.replace(/\(\d+\)$/, ''))
    .filter((w) => w && !/^(<.*>|\[.*\]|\+\+.*\+\+)$/.test(w));
}

/**
 * P(</s> | the last two words of `text`) (0–1) under the decoder `ps`'s language model; the start
 * of the sentence stands in for a missing word. Undefined for no words, or a decoder without an
 * n-gram model.
 */
export function sentenceEndProbability(ps, text) {
  const words = lmWords(text);
  if (words.length === 0) return undefined;
  const [getLm, getLogmath, probv, logmathExp] = bind();
  const lm = getLm(ps, '_default');
  if (!lm) return undefined;
  // ngram_probv takes the word first, then its history from the nearest word back.
  const history = ['<s>', ...words].slice(-2).reverse();
  return logmathExp(getLogmath(ps), probv(lm, '</s>', ...history.flatMap((w) => ['str', w]), 'str', null));
}
