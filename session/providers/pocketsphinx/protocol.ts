/** Messages between PocketsphinxSpeechToText (main thread) and a recogniser thread. */

export type RecogniserCommand =
  | { t: 'open'; id: number }
  /** PCM16 at 16 kHz; the buffer is transferred. */
  | { t: 'audio'; id: number; pcm: Int16Array }
  | { t: 'partial'; id: number }
  | { t: 'finish'; id: number }
  | { t: 'abort'; id: number }
  /** Exit once the commands before it are done. */
  | { t: 'close'; id: 0 };

export type RecogniserEvent =
  /** The decoder is loaded (commands sent before are queued and handled after). */
  | { t: 'ready' }
  | { t: 'partial'; id: number; text: string }
  | { t: 'final'; id: number; text: string }
  | { t: 'failed'; id: number; error: string };
