import { PocketsphinxSpeechToText } from '../session/providers/pocketsphinx-asr.ts';
import { concat, loadFixture, roomTone } from '../media/testing/audio-stream.ts';
const stt = new PocketsphinxSpeechToText(1);
await stt.whenReady();
const clip = loadFixture('pause-and.wav');
const first = clip.subarray(0, Math.round(2.5 * 16000));
for (const tail of [60, 100, 160, 220, 300]) {
  const s = stt.open();
  s.write(concat(roomTone(300), first.subarray(0, first.length), roomTone(tail)));
  const p = await s.partial!();
  s.abort();
  console.log(tail, JSON.stringify(p));
}
const s = stt.open(); s.write(concat(roomTone(300), first, roomTone(100))); console.log('final', JSON.stringify(await s.finish()));
await stt.close();
