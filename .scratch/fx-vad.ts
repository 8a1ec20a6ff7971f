import { createSileroFactory } from '../media/silero-vad.ts';
import { createFvadFactory } from '../media/fvad-vad.ts';
import { concat, loadFixture, roomTone } from '../media/testing/audio-stream.ts';
import { vadFrames } from '../media/testing/vad-frames.ts';
for (const f of [await createFvadFactory(3), await createSileroFactory()]) {
  for (const clip of ['okay.wav','cough.wav','tone.wav','click.wav','noise.wav','pause-and.wav']) {
    const fr = await vadFrames(f, concat(roomTone(200), loadFixture(clip), roomTone(400)));
    console.log(f.provider.padEnd(7), clip.padEnd(14), fr.map(x => x.speech ? '#' : '.').join(''));
  }
}
