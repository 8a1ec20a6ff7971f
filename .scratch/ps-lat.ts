import { readFileSync } from 'node:fs';
import { PocketsphinxSpeechToText } from '/work/wt/turns/session/providers/pocketsphinx-asr.ts';
const stt = new PocketsphinxSpeechToText(2);
await new Promise(r => setTimeout(r, 1500));
for (const f of ['story','twelve','order-pause']) {
  const wav = readFileSync(`/work/wt/turns/fixtures/audio/${f}.wav`);
  const pcm = new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.length));
  const s = stt.open();
  for (let i = 0; i < pcm.length; i += 320) { s.write(pcm.subarray(i, i + 320)); await new Promise(r => setTimeout(r, 20)); }
  await new Promise(r => setTimeout(r, 100));
  const t0 = performance.now(); const text = await s.finish();
  console.log(f, (pcm.length/16).toFixed(0), 'ms audio; finish ->', (performance.now()-t0).toFixed(0), 'ms:', text);
  await new Promise(r => setTimeout(r, 1500));
}
await stt.close();
