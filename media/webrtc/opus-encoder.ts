import { Encoder } from '@evan/opus';
import { OPUS_RATE, type OpusRate } from './opus.ts';

/**
 * The Opus encoder of the WebRTC downlink: @evan/opus (native, with a WASM fallback), mono,
 * 20 ms frames. Main thread only: the addon crashes the process when a worker thread that loaded
 * it exits (seen on any exit, even the process's own), so media workers get encoded packets.
 */
export class OpusFrameEncoder {
  private readonly encoder: Encoder;

  constructor(readonly sampleRate: OpusRate = OPUS_RATE) {
    this.encoder = new Encoder({ channels: 1, sample_rate: sampleRate, application: 'voip' });
    // Complexity 5 costs about 40% less CPU than libopus's default 10 (measured here: 6.8 vs
    // 10.9 ms per second of audio) for speech quality VoIP stacks routinely ship with.
    this.encoder.complexity = 5;
    this.encoder.signal = 'voice';
  }

  /** One 20 ms frame (sampleRate / 50 samples) → one Opus packet. */
  encode(frame: Int16Array): Uint8Array {
    return this.encoder.encode(frame);
  }
}

