import { createSileroFactory } from '../../media/silero-vad.ts';
import { PocketsphinxSpeechToText } from '../../session/providers/pocketsphinx-asr.ts';
import { percentile } from '../lib/stats.ts';
import { buildCorpus, PAUSE_MS } from '../turn-corpus/corpus.ts';
import { forSplit, ProbeRecogniser, runEndOfTurn, type EotResult } from './end-of-turn.ts';

/**
 * The end-of-turn part alone, Silero + lexical cue, for iterating on the rules:
 *   npx tsx bench/turn-taking/eot-only.ts
 * TURN_THRESHOLDS=0.45,0.3 (default 0.45); TURN_PROBE_CACHE=/tmp/probes.json keeps the probes'
 * words between runs; TURN_PROBE_LATENCY_MS=n pretends each took n ms; TURN_TRACE=1 prints each
 * probe and turn end as a JSON line; TURN_EOT_PARALLEL=n replays n clips at once (default 1);
 * TURN_CORPUS_CACHE=dir keeps the synthesised speech; TURN_SPLIT=tuning|heldout replays one half only;
 * TURN_MIN_POSTERIOR=0,0.1,0.2 replays each floor on the last word's posterior (0: off);
 * TURN_MIN_SENTENCE_END=0,0.05,0.1 each floor on the language model's sentence-end probability, with each posterior floor;
 * TURN_SURE_SENTENCE_END=0.2,2 each probability from which a doubted last word does not hold (above 1: off). Figures for the tuning half, the held-out
 * half and the whole. The figures to report come from `npm run bench -- turn-taking`.
 */
const corpus = buildCorpus(1);
// TURN_ASR_SEARCH="-maxhmmpf 2000 -maxwpf 10": the recogniser's search settings in place of the server's (a cache per setting).
const stt = new PocketsphinxSpeechToText(2, process.env.TURN_ASR_SEARCH?.split(/\s+/).filter(Boolean));
await stt.whenReady();
const latency = process.env.TURN_PROBE_LATENCY_MS;
const probes = new ProbeRecogniser(stt, { file: process.env.TURN_PROBE_CACHE, fixedLatencyMs: latency === undefined ? undefined : Number(latency) });
const thresholds = (process.env.TURN_THRESHOLDS ?? '0.45').split(',').map(Number);
const trace = process.env.TURN_TRACE ? (line: Record<string, unknown>) => console.log(JSON.stringify(line)) : undefined;
const parallel = Number(process.env.TURN_EOT_PARALLEL ?? 1);
const only = process.env.TURN_SPLIT;
const clips = only ? corpus.turns.filter((c) => c.split === only) : corpus.turns;
const vad = await createSileroFactory();
// TURN_MIN_POSTERIOR=0,0.1,0.2: each floor on the recheck's last-word posterior (default: the product's).
const floors = process.env.TURN_MIN_POSTERIOR?.split(',').map(Number) ?? [undefined];
const endFloors = process.env.TURN_MIN_SENTENCE_END?.split(',').map(Number) ?? [undefined];
const sures = process.env.TURN_SURE_SENTENCE_END?.split(',').map(Number) ?? [undefined];
for (const [floor, endFloor, sure] of floors.flatMap((f) => endFloors.flatMap((e) => sures.map((s) => [f, e, s] as const)))) {
  const system = { name: 'silero + lexical cue', vad, lexical: true, minLastWordPosterior: floor, minSentenceEndProbability: endFloor, sureSentenceEndProbability: sure };
  const results = await runEndOfTurn(system, clips, thresholds, probes, trace, parallel);
  probes.save();
  const label = (floor === undefined ? '' : `, posterior floor ${floor}`) + (endFloor === undefined ? '' : `, sentence-end floor ${endFloor}`) + (sure === undefined ? '' : `, sure end ${sure}`);
  for (const r of results) {
    for (const split of ['tuning', 'heldout'] as const) if (!only || only === split) console.log(`threshold ${r.threshold}${label}, ${split}: ${summary(forSplit(r, split))}`);
    if (!only) console.log(`threshold ${r.threshold}${label}, whole: ${summary(r)}`);
  }
}
await stt.close();
// Silero's runtime keeps the event loop alive.
process.exit(0);

function summary(r: EotResult): string {
  const upTo800 = r.pauses.filter((x) => x.ms <= 800);
  const byLength = PAUSE_MS.map((ms) => `${ms}: ${r.pauses.filter((x) => x.ms === ms && x.cut).length}/${r.pauses.filter((x) => x.ms === ms).length}`).join(', ');
  const cut = (100 * upTo800.filter((x) => x.cut).length) / upTo800.length;
  const held = (100 * r.delays.filter((d) => d > 700).length) / r.delays.length;
  const mean = r.delays.reduce((a, b) => a + b, 0) / r.delays.length;
  return `p50 ${Math.round(percentile(r.delays, 50))} ms, p90 ${Math.round(percentile(r.delays, 90))} ms (${r.delays.length}), held > 700 ms ${held.toFixed(1)} %, mean ${Math.round(mean)} ms; false cut-offs ≤ 800 ms ${cut.toFixed(1)} % (${byLength})`;
}
