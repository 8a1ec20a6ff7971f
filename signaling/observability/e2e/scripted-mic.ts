import { Endpointer, type EndpointerOptions } from '../../../media/endpointer.ts';
import { int16ToBytes, rmsDbfs } from '../../../media/pcm.ts';
import { concat } from '../../../media/testing/audio-stream.ts';
import { vadFrames } from '../../../media/testing/vad-frames.ts';
import { VAD_FRAME_SAMPLES, type VadFactory } from '../../../media/vad.ts';
import type { WsTestClient } from '../../testing/ws-test-client.ts';

/** A moment of the uplink as the server's endpointer saw it, by frame index. */
export type Moment = { type: 'speech_start'; frame: number; onsetFrame: number } | { type: 'turn_end'; frame: number; lastVoicedFrame: number };

/**
 * A microphone for end-to-end tests: streams 16 kHz PCM in real time as 20 ms frames and keeps
 * each frame's send time. `replay` runs the session's own VAD and endpointer over everything sent,
 * so a test knows which frame the server took for the speech onset or the last voiced sample.
 */
export class ScriptedMic {
  readonly sentAt: number[] = [];
  private readonly frames: Int16Array[] = [];

  constructor(private readonly client: WsTestClient) {}

  /** Streams `samples` (a whole number of frames) at real-time pace; resolves after the last frame. */
  async stream(samples: Int16Array): Promise<void> {
    if (samples.length % VAD_FRAME_SAMPLES !== 0) throw new Error('stream whole 20 ms frames');
    const started = performance.now();
    for (let i = 0, n = 0; i < samples.length; i += VAD_FRAME_SAMPLES, n += 1) {
      const wait = started + n * 20 - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      const frame = samples.slice(i, i + VAD_FRAME_SAMPLES);
      this.frames.push(frame);
      this.sentAt.push(performance.now());
      this.client.sendBinary(int16ToBytes(frame));
    }
  }

  async replay(vads: VadFactory, options: EndpointerOptions): Promise<Moment[]> {
    // A fresh detector fed the same frames from the session's start decides as the session's did.
    const voiced = (await vadFrames(vads, concat(...this.frames))).map((f) => f.speech);
    const endpointer = new Endpointer(options);
    const moments: Moment[] = [];
    this.frames.forEach((frame, i) => {
      const speech = voiced[i]!;
      for (const event of endpointer.push(frame, speech, rmsDbfs(frame))) {
        if (event.type === 'speech_start') {
          // The first voiced frame among the last four (the window that opened the segment).
          let onset = Math.max(0, i - 3);
          while (onset < i && !voiced[onset]) onset += 1;
          moments.push({ type: 'speech_start', frame: i, onsetFrame: onset });
        } else if (event.type === 'turn_end') {
          moments.push({ type: 'turn_end', frame: i, lastVoicedFrame: i - event.silentMs / 20 });
        }
      }
    });
    return moments;
  }
}

/** Digital silence, `ms` long. */
export function zeros(ms: number): Int16Array {
  return new Int16Array((16000 * ms) / 1000);
}

/** The clip cut to whole frames. */
export function frames(samples: Int16Array): Int16Array {
  return samples.subarray(0, samples.length - (samples.length % VAD_FRAME_SAMPLES));
}
