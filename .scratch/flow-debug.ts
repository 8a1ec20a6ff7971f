import { Endpointer, endpointerOptions } from '../media/endpointer.ts';
import { createSileroFactory } from '../media/silero-vad.ts';
import { createFvadFactory } from '../media/fvad-vad.ts';
import { rmsDbfs } from '../media/pcm.ts';
import { concat, loadFixture, roomTone } from '../media/testing/audio-stream.ts';
import { vadFrames } from '../media/testing/vad-frames.ts';
for (const f of [await createFvadFactory(3), await createSileroFactory()]) {
  const audio = concat(roomTone(200), loadFixture('name.wav'), roomTone(700), loadFixture('twelve.wav'), roomTone(1500));
  const e = new Endpointer(endpointerOptions(0.05, true));
  const fr = await vadFrames(f, audio);
  console.log(f.provider, fr.map(x => x.speech ? '#' : '.').join(''));
  fr.forEach(({frame, speech}, i) => { for (const ev of e.push(frame, speech, rmsDbfs(frame))) console.log((i+1)*20, ev.type); });
  console.log('name ends at', 200 + loadFixture('name.wav').length/16, 'twelve starts at', 900 + loadFixture('name.wav').length/16);
}
