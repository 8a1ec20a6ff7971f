import { Endpointer, endpointerOptions } from '../endpointer.ts';
import { VAD_FRAME_MS, VAD_FRAME_SAMPLES, type VadFactory } from '../vad.ts';
import { concat, roomTone } from './audio-stream.ts';

/**
 * Frames handed over ahead of the detector's answers: a live microphone is never further ahead
 * (Silero's fallback takes over a detector that falls 320 ms behind), yet a clip runs many times
 * faster than real time.
 */
const AHEAD = 8;

/** Every 20 ms frame of a clip with its VAD decision, once the detector has answered them all. */
export async function vadFrames(factory: VadFactory, audio: Int16Array): Promise<Array<{ frame: Int16Array; speech: boolean }>> {
  const out: Array<{ frame: Int16Array; speech: boolean }> = [];
  const frames = Math.floor(audio.length / VAD_FRAME_SAMPLES);
  let decided: () => void = () => undefined;
  const vad = factory.create((frame, speech) => {
    out.push({ frame, speech });
    decided();
  });
  const answer = (): Promise<void> => new Promise<void>((resolve) => (decided = resolve));
  for (let i = 0; i < frames; i += 1) {
    while (vad.pending >= AHEAD) await answer();
    vad.push(audio.slice(i * VAD_FRAME_SAMPLES, (i + 1) * VAD_FRAME_SAMPLES));
  }
  // Silero decides a frame once the 32 ms window holding its middle sample is full: a 40 ms tail
  // fills one, so every push below is answered; wait for that answer rather than for time.
  const tail = new Int16Array(VAD_FRAME_SAMPLES * 2);
  while (out.length < frames) {
    const answered = answer();
    vad.push(tail);
    await answered;
  }
  vad.free();
  return out.slice(0, frames);
}

/** When each endpointer event came, in ms from the clip's start, for the clip between 300 ms and 600 ms of room tone. */
export async function endpointEvents(factory: VadFactory, clip: Int16Array): Promise<Record<string, number[]>> {
  const endpointer = new Endpointer(endpointerOptions());
  const at: Record<string, number[]> = {};
  for (const [i, { frame, speech }] of (await vadFrames(factory, concat(roomTone(300), clip, roomTone(600)))).entries()) {
    for (const e of endpointer.push(frame, speech)) (at[e.type] ??= []).push(i * VAD_FRAME_MS - 300);
  }
  return at;
}
