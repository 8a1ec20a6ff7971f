import { readFileSync } from 'node:fs';
import { FliteTextToSpeech } from '../session/providers/flite-tts.ts';
import { fixture } from './lib/audio.ts';
import { debianPocketsphinx, soundSwallower, type BenchRecogniser } from './lib/recognisers.ts';
import { progress, round } from './lib/stats.ts';
import { debianVoices, fliteVoices, type BenchVoice } from './lib/synthesisers.ts';
import { wordErrorRate } from './lib/wer.ts';
import type { Row } from './types.ts';

/**
 * `npm run bench -- voices`: which offline recogniser and which voice to use by default,
 * measured without a listener. Recognisers: word error rate on the speech fixtures
 * (fixtures/audio, transcripts.json), decode real-time factor, model load time, peak memory.
 * Voices: the round trip (each voice speaks ten reply-like sentences, Debian's pocketsphinx
 * transcribes them) as word error rate, and synthesis real-time factor. Decisions from these
 * figures are in the README ("Voice with no system packages").
 */
export const name = 'voices';

/** Reply-like sentences, written without looking at any voice's output; no digits to spell. */
export const SENTENCES = [
  'Hello! How can I help you today?',
  'Twelve times seven is eighty four.',
  'Nice to meet you. I will remember that.',
  'The weather in Paris is sunny and warm.',
  'I have booked a table for two at eight in the evening.',
  'Please hold on while I check your order.',
  'Your package will arrive on Tuesday morning.',
  'Sorry, I did not catch that. Could you say it again?',
  'The meeting has been moved to the afternoon.',
  'Thanks for talking with me. Goodbye!',
];

const FIXTURES = Object.entries(JSON.parse(readFileSync(new URL('../fixtures/audio/transcripts.json', import.meta.url), 'utf8')) as Record<string, string>).filter(([, text]) => text !== '');

export async function run(): Promise<Row[]> {
  const rows: Row[] = [];
  const reference = await debianPocketsphinx();
  for (const make of [async () => reference, soundSwallower]) {
    const recogniser = await make();
    if (typeof recogniser === 'string') {
      rows.push({ benchmark: name, metric: 'recogniser skipped', value: '-', unit: '', note: recogniser });
      continue;
    }
    rows.push(...(await recogniserRows(recogniser)));
    if (recogniser !== reference) recogniser.close();
  }
  if (typeof reference === 'string') return rows;
  const flite = new FliteTextToSpeech(1);
  try {
    for (const voice of [...fliteVoices(flite), ...debianVoices()]) rows.push(await voiceRow(voice, reference));
  } finally {
    await flite.close();
    reference.close();
  }
  return rows;
}

async function recogniserRows(recogniser: BenchRecogniser): Promise<Row[]> {
  progress(`voices: ${recogniser.name} on ${FIXTURES.length} fixtures`);
  const pairs: Array<{ reference: string; hypothesis: string }> = [];
  let audioMs = 0;
  let decodeMs = 0;
  for (const [file, transcript] of FIXTURES) {
    const samples = fixture(file);
    const heard = await recogniser.transcribe(samples);
    pairs.push({ reference: transcript, hypothesis: heard.text });
    audioMs += samples.length / 16;
    decodeMs += heard.decodeMs;
  }
  const exact = pairs.filter((p) => p.hypothesis === p.reference).length;
  const sample = pairs.map((p) => `"${p.hypothesis}"`).join(', ');
  return [
    { benchmark: name, metric: `ASR word error rate, ${recogniser.name}`, value: round(wordErrorRate(pairs), 1), unit: '%', note: `${FIXTURES.length} speech fixtures (flite rms voice, ${pairs.reduce((n, p) => n + p.reference.split(' ').length, 0)} words), ${exact} exact; needs: ${recogniser.needs}; heard: ${sample}` },
    { benchmark: name, metric: `ASR real-time factor, ${recogniser.name}`, value: round(decodeMs / audioMs, 3), unit: '× real time', note: `decode CPU time / audio time over the fixtures (${round(audioMs / 1000, 1)} s of audio), one utterance at a time, model load excluded: ${round(recogniser.loadMs, 0)} ms of CPU once (the server loads it ahead of need); below 1 keeps up with speech` },
    { benchmark: name, metric: `ASR peak memory, ${recogniser.name}`, value: round(recogniser.memoryMb(), 1), unit: 'MB', note: 'peak resident memory of one recogniser with its model (the pocketsphinx process\'s VmHWM; for WASM, the growth of this process\'s RSS)' },
  ];
}

async function voiceRow(voice: BenchVoice, recogniser: BenchRecogniser): Promise<Row> {
  progress(`voices: ${voice.name}, ${SENTENCES.length} sentences round trip`);
  const pairs: Array<{ reference: string; hypothesis: string }> = [];
  let audioMs = 0;
  let synthMs = 0;
  for (const sentence of SENTENCES) {
    const spoken = await voice.synthesize(sentence);
    synthMs += spoken.ms;
    audioMs += spoken.samples.length / 16;
    pairs.push({ reference: sentence, hypothesis: (await recogniser.transcribe(spoken.samples)).text });
  }
  voice.close?.();
  const worst = pairs.map((p) => p.hypothesis).slice(0, 3).map((h) => `"${h}"`).join(', ');
  return {
    benchmark: name,
    metric: `voice round-trip word error rate, ${voice.name}`,
    value: round(wordErrorRate(pairs), 1),
    unit: '%',
    note: `${SENTENCES.length} sentences spoken, transcribed by ${recogniser.name}; synthesis real-time factor ${round(synthMs / audioMs, 3)} (synthesis time / audio time, one sentence at a time); needs: ${voice.needs}; first heard: ${worst}`,
  };
}
