import { concat, loadFixture, roomTone } from '../../media/testing/audio-stream.ts';

/**
 * Uplink audio for the voice benchmarks, built from the committed fixtures (flite voices through
 * sox, trimmed tight: the speech runs to the file's last 20 ms). Clips are padded with room tone
 * so that the speech starts (or ends) exactly on a 20 ms frame boundary: then the send time of
 * that frame is the moment the speech started (or its last voiced sample was captured).
 */

export const RATE = 16000;
export const FRAME_SAMPLES = 320;

/** n samples of the test helpers' room tone (amplitude 30, about −60 dBFS). */
export function tone(samples: number, rate = RATE): Int16Array {
  return roomTone((samples * 1000) / rate, rate);
}

/** Room tone first, so the clip's last sample is the last sample of a frame. */
export function endAligned(clip: Int16Array, frameSamples = FRAME_SAMPLES, rate = RATE): Int16Array {
  const pad = (frameSamples - (clip.length % frameSamples)) % frameSamples;
  return concat(tone(pad, rate), clip);
}

/** Room tone after, so the clip's first sample is the first sample of a frame. */
export function startAligned(clip: Int16Array, frameSamples = FRAME_SAMPLES, rate = RATE): Int16Array {
  const pad = (frameSamples - (clip.length % frameSamples)) % frameSamples;
  return concat(clip, tone(pad, rate));
}

export function fixture(name: string, rate = RATE): Int16Array {
  return loadFixture(name, rate);
}
