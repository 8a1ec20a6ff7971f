import { SPEAKERS, speak, cough, door, clicks, tone, noise, rmsDb } from '../bench/turn-corpus/synth.ts';
import { PocketsphinxSpeechToText } from '../session/providers/pocketsphinx-asr.ts';
const stt = new PocketsphinxSpeechToText(2);
const t0 = performance.now();
for (const s of SPEAKERS) {
  for (const text of ['mm-hm', 'yeah', 'okay', 'right', 'uh-huh', 'i would like to book a table for two and']) {
    const a = speak(s, text);
    const st = stt.open(); st.write(a); const r = await st.finish();
    console.log(s.id, JSON.stringify(text), (a.length/16).toFixed(0), 'ms', rmsDb(a).toFixed(1), '->', JSON.stringify(r));
  }
}
console.log('cough', cough(0).length/16, 'door', door(0).length/16, 'clicks', clicks(3).length/16, 'tone', tone(500).length/16, 'noise', noise('pink', 300).length/16);
console.log('took', performance.now()-t0);
await stt.close();
