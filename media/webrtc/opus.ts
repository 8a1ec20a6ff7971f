import { createRequire } from 'node:module';
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
 * `libopus-wasm`: libopus's own opus_decode, PCM16 out, from @evan/opus's WebAssembly build
 * (the package the encoder uses). One WASM instance per thread serves every call's decoder, and
 * a frame costs one copy out of WASM memory. bench/opus-decode.ts measured it against
 * opus-decoder side by side: about 0.8× the time per frame and a third of the bytes left to
 * the collector, ~18 KB per call instead of ~73 KB (opus-decoder instantiates WASM per decoder
 * and returns Float32 that must be converted).
 * `opus-decoder`: the previous decoder, kept as the fallback if the first cannot load.
 *
 * Never @evan/opus's main entry here: it prefers the native addon, which crashes the process when
 * a worker thread that loaded it exits, and this module runs in the media worker threads.
 */
export type OpusDecoderEngine = 'libopus-wasm' | 'opus-decoder';

type LibopusDecoder = import('@evan/opus').Decoder;
const libopus = ((): (new (options: { channels: 1; sample_rate: OpusRate }) => LibopusDecoder) | undefined => {
  try {
    return (createRequire(import.meta.url)('@evan/opus/wasm/index.js') as typeof import('@evan/opus/wasm/index.js')).Decoder;
  } catch {
    return undefined;
  }
})();

export const DEFAULT_DECODER_ENGINE: OpusDecoderEngine = libopus ? 'libopus-wasm' : 'opus-decoder';

const NOTHING = new Int16Array(0);

export class OpusFrameDecoder {
  private readonly libopus: LibopusDecoder | undefined;
  private readonly fallback: OpusDecoder<OpusRate> | undefined;
  readonly ready: Promise<void>;

  constructor(
    readonly sampleRate: OpusRate = OPUS_RATE,
    readonly engine: OpusDecoderEngine = DEFAULT_DECODER_ENGINE,
  ) {
    if (engine === 'libopus-wasm' && libopus) {
      this.libopus = new libopus({ channels: 1, sample_rate: sampleRate });
      this.ready = Promise.resolve();
    } else {
      this.engine = 'opus-decoder';
      this.fallback = new OpusDecoder({ channels: 1, sampleRate });
      this.ready = this.fallback.ready;
    }
  }

  /** One Opus packet → PCM16 mono at sampleRate. A broken packet decodes to nothing. */
  decode(packet: Uint8Array): Int16Array {
    if (this.libopus) {
      let bytes: Uint8Array;
      try {
        bytes = this.libopus.decode(packet);
      } catch {
        return NOTHING;
      }
      return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 1);
    }
    let decoded: { channelData: Float32Array[]; samplesDecoded: number };
    try {
      decoded = this.fallback!.decodeFrame(packet);
    } catch {
      // opus-decoder throws a RangeError on a packet larger than its input buffer.
      return NOTHING;
    }
    const { channelData, samplesDecoded } = decoded;
    const mono = channelData[0];
    if (!mono || samplesDecoded === 0) return NOTHING;
    const out = new Int16Array(samplesDecoded);
    for (let i = 0; i < samplesDecoded; i += 1) {
      const v = Math.round(mono[i]! * 32767);
      out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
    return out;
  }

  free(): void {
    try {
      if (this.libopus) (this.libopus as LibopusDecoder & { drop(): void }).drop();
      else this.fallback!.free();
    } catch {
      // Never initialised (the call ended before its first packet): nothing to free.
    }
  }
}
