import { SPEAKERS, speak } from '../bench/turn-corpus/synth.ts';
import { PocketsphinxSpeechToText } from '../session/providers/pocketsphinx-asr.ts';
const stt = new PocketsphinxSpeechToText(2);
for (const s of [SPEAKERS[0]!, SPEAKERS[4]!, SPEAKERS[6]!]) {
  for (const text of ['mhm', 'hmm', 'mmhmm', 'uh huh', 'yep', 'sure', 'wait stop', 'stop', 'no wait i meant tuesday']) {
    const a = speak(s, text);
    const st = stt.open(); st.write(a); const r = await st.finish();
    console.log(s.id, JSON.stringify(text), (a.length/16).toFixed(0), 'ms ->', JSON.stringify(r));
  }
}
await stt.close();
