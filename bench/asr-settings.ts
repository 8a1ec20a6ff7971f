import { readFileSync } from 'node:fs';
import { endpointerOptions } from '../media/endpointer.ts';
import { concat, roomTone } from '../media/testing/audio-stream.ts';
import { Decoder, SEARCH_SETTINGS } from '../session/providers/pocketsphinx/decoder.mjs';
import { fixture } from './lib/audio.ts';
import { progress, round } from './lib/stats.ts';
import { wordErrors } from './lib/wer.ts';
import { buildCorpus } from './turn-corpus/corpus.ts';
import type { Row } from './types.ts';

/**
 * The recogniser's search settings (issue 19 point 2): pocketsphinx's defaults (what the server
 * ran before) against the server's SEARCH_SETTINGS, on the same clips in the same run, clip by
 * clip in turn so both see the same machine load. Fed as the server feeds it: 20 ms chunks, a
 * partial hypothesis every 200 ms (what end of turn asks for), the last word's posterior at the
 * end (the recheck), then the end of the utterance.
 *
 * The last-word posterior is what end of turn's recheck reads (media/endpointer.ts): it is taken
 * where the recheck takes it, after recheckSilenceMs of silence at each thinking pause and at the
 * end, and the two settings' doubts (posterior under minLastWordPosterior) are compared.
 *
 * Clips: the turn corpus's utterances (flite, espeak-ng and festival voices, some with thinking
 * pauses; BENCH_ASR_SCALE, default 0.25, of it) and the 16 kHz audio fixtures with transcripts.
 * BENCH_ASR_CANDIDATES="-maxhmmpf 3000|-topn 2 -maxwpf 5" adds settings to try beside them.
 * CPU is this process's (the decoder runs on this thread; nothing else does meanwhile).
 */

export const name = 'asr-settings';

const CHUNK = 320;
const PARTIAL_EVERY = 10;

interface Clip {
  id: string;
  text: string;
  /** Speech, then the recheck's silence. */
  audio: Int16Array;
  /** Samples after which the recheck would ask for the last word's posterior. */
  probes: number[];
}

interface Tally {
  cpuMs: number;
  endCpuMs: number;
  errors: number;
  words: number;
  exact: number;
  /** Per clip, per probe (NaN: no posterior). */
  posteriors: number[][];
}

const RECHECK = endpointerOptions();
const RECHECK_SAMPLES = (RECHECK.recheckSilenceMs * 16_000) / 1000;

function clips(): Clip[] {
  const scale = Number(process.env.BENCH_ASR_SCALE ?? 0.25);
  progress(`asr-settings: building the turn corpus at scale ${scale}`);
  const withSilence = (id: string, text: string, speech: Int16Array, pauses: number[]): Clip => ({
    id,
    text,
    audio: concat(speech, roomTone(RECHECK.recheckSilenceMs)),
    probes: [...pauses, speech.length].map((at) => at + RECHECK_SAMPLES),
  });
  const corpus = buildCorpus(scale).turns.map((t) => withSilence(t.id, t.text, t.audio, t.pauses.map((p) => p.atSample)));
  const transcripts = JSON.parse(readFileSync(new URL('../fixtures/audio/transcripts.json', import.meta.url), 'utf8')) as Record<string, string>;
  const fixtures = Object.entries(transcripts).map(([file, text]) => withSilence(`fixture/${file}`, text, fixture(file), []));
  return [...corpus, ...fixtures];
}

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

function decode(decoder: Decoder, clip: Clip, tally: Tally): void {
  const posteriors: number[] = [];
  const probes = [...clip.probes];
  const t0 = cpuMs();
  decoder.start();
  for (let i = 0, n = 1; i < clip.audio.length; i += CHUNK, n += 1) {
    decoder.process(clip.audio.subarray(i, i + CHUNK));
    if (n % PARTIAL_EVERY === 0) decoder.partial();
    while (probes.length > 0 && i + CHUNK >= probes[0]!) {
      probes.shift();
      posteriors.push(decoder.lastWord()?.posterior ?? Number.NaN);
    }
  }
  tally.posteriors.push(posteriors);
  const t1 = cpuMs();
  const text = decoder.end();
  const t2 = cpuMs();
  tally.cpuMs += t2 - t0;
  tally.endCpuMs += t2 - t1;
  const { errors, words } = wordErrors(clip.text, text);
  tally.errors += errors;
  tally.words += words;
  if (errors === 0) tally.exact += 1;
}

export async function run(): Promise<Row[]> {
  const set = clips();
  const speechS = set.reduce((sum, clip) => sum + clip.audio.length / 16_000, 0);
  const configs = [
    { who: 'pocketsphinx defaults (before)', decoder: new Decoder([]), tally: tally() },
    { who: `server settings (${SEARCH_SETTINGS.join(' ')})`, decoder: new Decoder(), tally: tally() },
    ...candidates().map((settings) => ({ who: `candidate (${settings.join(' ')})`, decoder: new Decoder(settings), tally: tally() })),
  ];
  progress(`asr-settings: ${set.length} clips, ${round(speechS, 1)} s of audio, ${configs.length} settings in turn`);
  for (const clip of set) for (const config of configs) decode(config.decoder, clip, config.tally);
  const doubted = (p: number): boolean => p < RECHECK.minLastWordPosterior;
  const before = configs[0]!.tally.posteriors.flat();
  return configs.flatMap(({ who, tally: t }) => [
    {
      benchmark: name,
      metric: `${who}: recogniser CPU per second of audio`,
      value: round(t.cpuMs / speechS, 1),
      unit: 'ms CPU/s',
      note: `${set.length} clips, ${round(speechS, 1)} s; ${round(t.cpuMs / set.length, 1)} ms per utterance, of which ${round(t.endCpuMs / set.length, 1)} ms at its end (the final passes)`,
    },
    recheckRow(who, t.posteriors.flat(), before, doubted),
    {
      benchmark: name,
      metric: `${who}: word error rate`,
      value: round((100 * t.errors) / t.words, 2),
      unit: '%',
      note: `${t.errors} errors / ${t.words} reference words; ${t.exact}/${set.length} clips exact (synthetic voices; the noise fixtures count as exact when nothing is recognised)`,
    },
  ]);
}

function candidates(): string[][] {
  return (process.env.BENCH_ASR_CANDIDATES ?? '')
    .split('|')
    .map((settings) => settings.trim().split(/\s+/).filter(Boolean))
    .filter((settings) => settings.length > 0);
}

function tally(): Tally {
  return { cpuMs: 0, endCpuMs: 0, errors: 0, words: 0, exact: 0, posteriors: [] };
}

function recheckRow(who: string, posteriors: number[], before: number[], doubted: (p: number) => boolean): Row {
  const known = posteriors.filter((p) => !Number.isNaN(p));
  const same = posteriors.filter((p, i) => doubted(p) === doubted(before[i]!)).length;
  const sorted = [...known].sort((a, b) => a - b);
  return {
    benchmark: name,
    metric: `${who}: recheck doubts the last word (posterior < ${RECHECK.minLastWordPosterior})`,
    value: known.filter(doubted).length,
    unit: `of ${posteriors.length} probes`,
    note: `same doubt as pocketsphinx's defaults at ${same}/${posteriors.length} probes (thinking pauses and ends, after ${RECHECK.recheckSilenceMs} ms of silence); posterior p25/p50 ${round(sorted[Math.floor(sorted.length / 4)] ?? Number.NaN, 3)}/${round(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN, 3)}; none at ${posteriors.length - known.length}`,
  };
}
