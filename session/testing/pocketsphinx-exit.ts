// A process whose recognisers are still inside libpocketsphinx when it ends
// (pocketsphinx-asr.test.ts): loading their models (a server stopped right after it started) or
// decoding a turn. MODE=exit: exit after EXIT_AFTER_MS; MODE=close: close() at once, then exit;
// MODE=decode: once loaded, finish an utterance and exit EXIT_AFTER_MS later.
import { loadFixture } from '../../media/testing/audio-stream.ts';
import { PocketsphinxSpeechToText } from '../providers/pocketsphinx-asr.ts';

const after = Number(process.env.EXIT_AFTER_MS ?? 100);
// One recogniser: the test runs several of these processes at once.
const stt = new PocketsphinxSpeechToText(1);
if (process.env.MODE === 'close') {
  await stt.close();
  process.exit(0);
}
if (process.env.MODE === 'decode') {
  await stt.whenReady();
  const utterance = stt.open();
  utterance.write(loadFixture('weather.wav'));
  void utterance.finish();
}
setTimeout(() => process.exit(0), after);
