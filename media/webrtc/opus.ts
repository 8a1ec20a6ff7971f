import { OpusDecoder } from 'opus-decoder';

export const OPUS_RATE = 48000;
/** Samples in 20 ms at Opus's 48 kHz, which is also the RTP clock step per packet (RFC 7587). */
export const OPUS_FRAME_SAMPLES = 960;
/**
 * The rate the server's call media runs at: Opus encodes from and decodes to 16 kHz natively,
 * which is what recognition wants and what the offline voices speak, so a call needs no
 * resampling at all (profiling showed resampling and 48 kHz encoding as the largest per-call
 * costs). The RTP clock stays 48 kHz whatever the rate.
 */
export const MEDIA_RATE = 16000;
export const MEDIA_FRAME_SAMPLES = MEDIA_RATE / 50;

export type OpusRate = 8000 | 12000 | 16000 | 24000 | 48000;

/**
 * Decoding uses opus-decoder (WASM), as the design card asks. This module must not load
 * @evan/opus: it is imported by the media worker threads, and that native addon crashes the
 * process when a thread that loaded it exits (the encoder lives in opus-encoder.ts, main thread).
 */
export class OpusFrameDecoder {
  private readonly decoder: OpusDecoder<OpusRate>;
  readonly ready: Promise<void>;

  constructor(readonly sampleRate: OpusRate = OPUS_RATE) {
    this.decoder = new OpusDecoder({ channels: 1, sampleRate });
    this.ready = this.decoder.ready;
  }

  /** One Opus packet → PCM16 mono at sampleRate. A broken packet decodes to nothing. */
  decode(packet: Uint8Array): Int16Array {
    const { channelData, samplesDecoded } = this.decoder.decodeFrame(packet);
    const mono = channelData[0];
    if (!mono || samplesDecoded === 0) return new Int16Array(0);
    const out = new Int16Array(samplesDecoded);
    for (let i = 0; i < samplesDecoded; i += 1) {
      const v = Math.round(mono[i]! * 32767);
      out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
    return out;
  }

  free(): void {
    try {
      this.decoder.free();
    } catch {
      // Never initialised (the call ended before its first packet): nothing to free.
    }
  }
}
