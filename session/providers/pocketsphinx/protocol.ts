/** Messages between PocketsphinxSpeechToText (main thread) and a recogniser thread. */

export type RecogniserCommand =
  | { t: 'open'; id: number }
  /** PCM16 at 16 kHz; the buffer is transferred. */
  | { t: 'audio'; id: number; pcm: Int16Array }
  | { t: 'partial'; id: number }
  /** The last word so far and its posterior (a word lattice: a few ms of CPU, so only when asked). */
  | { t: 'posterior'; id: number }
  /** How likely the sentence ends after the words so far, by the language model (microseconds). */
  | { t: 'sentence_end'; id: number }
  | { t: 'finish'; id: number }
  | { t: 'abort'; id: number }
  /** Exit once the commands before it are done. */
  | { t: 'close'; id: 0 };

export type RecogniserEvent =
  /** The decoder is loaded (commands sent before are queued and handled after). */
  | { t: 'ready' }
  | { t: 'partial'; id: number; text: string }
  /** posterior: 0–1, absent before any word. */
  | { t: 'posterior'; id: number; posterior?: number }
  /** probability: 0–1, absent before any word. */
  | { t: 'sentence_end'; id: number; probability?: number }
  | { t: 'final'; id: number; text: string }
  | { t: 'failed'; id: number; error: string };
