import { VAD_FRAME_SAMPLES, type VadFactory } from '../vad.ts';

/** Every 20 ms frame of a clip with its VAD decision, once the detector has answered them all. */
export async function vadFrames(factory: VadFactory, audio: Int16Array): Promise<Array<{ frame: Int16Array; speech: boolean }>> {
  const out: Array<{ frame: Int16Array; speech: boolean }> = [];
  const frames = Math.floor(audio.length / VAD_FRAME_SAMPLES);
  let resolve: () => void = () => undefined;
  const done = new Promise<void>((r) => (resolve = r));
  const vad = factory.create((frame, speech) => {
    out.push({ frame, speech });
    if (out.length === frames) resolve();
  });
  for (let i = 0; i < frames; i += 1) vad.push(audio.slice(i * VAD_FRAME_SAMPLES, (i + 1) * VAD_FRAME_SAMPLES));
  // Silero decides a frame once the 32 ms window holding its last sample is full: flush the tail.
  const tail = new Int16Array(VAD_FRAME_SAMPLES * 2);
  while (out.length < frames) {
    vad.push(tail);
    await new Promise((r) => setTimeout(r, 1));
    if (out.length >= frames) break;
  }
  if (frames === 0) resolve();
  await done;
  vad.free();
  return out.slice(0, frames);
}
