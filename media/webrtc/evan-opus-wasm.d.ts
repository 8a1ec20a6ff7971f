/** @evan/opus's WebAssembly build alone (its package types only the entry that may load the addon). */
declare module '@evan/opus/wasm/index.js' {
  export { Decoder, Encoder } from '@evan/opus';
}
