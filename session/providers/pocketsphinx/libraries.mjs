// Debian's libpocketsphinx3 and libsphinxbase3 through koffi, loaded once per thread and shared by
// the decoder and its language-model queries (sentence-end.mjs).
import koffi from 'koffi';

let libraries;

export function pocketsphinxLibraries() {
  libraries ??= { ps: koffi.load('libpocketsphinx.so.3'), sb: koffi.load('libsphinxbase.so.3') };
  return libraries;
}
