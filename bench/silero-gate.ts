import { concat, loadFixture, roomTone } from '../media/testing/audio-stream.ts';
import { vadFrames } from '../media/testing/vad-frames.ts';
import { createSileroFactory, type SileroFactory } from '../media/silero-vad.ts';
import type { SpeechToText } from '../session/providers/asr.ts';
import { progress } from './lib/stats.ts';
import { buildCorpus } from './turn-corpus/corpus.ts';
import { ProbeRecogniser, runEndOfTurn } from './turn-taking/end-of-turn.ts';
import type { Row } from './types.ts';

/**
 * Silero's quiet gate (SILERO_QUIET_GATE, media/silero-gate.ts) against no gate, on decisions
 * alone (nothing here is timed, so it may run on a busy machine): every frame of the turn-taking
 * corpus (all voices, pauses, noises and SNRs, the sounds made during replies) and of the audio
 * fixtures, decided by two Silero detectors side by side, with 300 ms of room tone before each
 * clip (as the turn-taking bench) and with 3 s (a user silent for a while); the share of windows
 * the gate skipped; end-of-turn outcomes (Silero, fixed silence, every threshold of the
 * turn-taking bench) and, for the sounds made during replies, voiced frames and the longest
 * voiced run (what barge-in confirmation counts).
 */

export const name = 'silero-gate';

const FIXTURES = ['click', 'cough', 'name', 'near-silent', 'noise', 'okay', 'order-pause', 'pause-and', 'story', 'tone', 'twelve', 'weather', 'yeah', 'zeros'];
const THRESHOLDS = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5];
const TAIL_MS = 3000;
const PARALLEL = 16;

export async function run(): Promise<Row[]> {
  progress('silero-gate: building the turn-taking corpus');
  const corpus = buildCorpus(Number(process.env.TURN_CORPUS_SCALE ?? 1));
  const gated = await createSileroFactory({ batchWaitMs: 0, quietGate: true });
  const plain = await createSileroFactory({ batchWaitMs: 0 });
  const clips = [...corpus.turns, ...corpus.overlaps, ...FIXTURES.map((f) => ({ id: `fixture/${f}`, audio: loadFixture(`${f}.wav`) }))];
  const rows: Row[] = [];
  for (const leadMs of [300, 3000]) {
    progress(`silero-gate: ${clips.length} clips, ${leadMs} ms of room tone before each`);
    const before = { quiet: gated.quietWindows, run: gated.model.windows };
    let differing = 0;
    let frames = 0;
    const where: string[] = [];
    for (let i = 0; i < clips.length; i += PARALLEL) {
      const group = clips.slice(i, i + PARALLEL);
      const decided = await Promise.all(group.map((c) => both(gated, plain, concat(roomTone(leadMs), c.audio, roomTone(TAIL_MS)))));
      decided.forEach(([a, b], k) => {
        frames += a.length;
        const at = a.flatMap((x, f) => (x === b[f] ? [] : [f]));
        differing += at.length;
        if (at.length > 0) where.push(`${group[k]!.id}@${at.map((f) => f * 20 - leadMs).join(',')}`);
      });
    }
    const skipped = gated.quietWindows - before.quiet;
    const share = skipped / (skipped + gated.model.windows - before.run);
    rows.push({
      benchmark: name,
      metric: `frames decided differently with the quiet gate, ${leadMs} ms of room tone before each clip`,
      value: differing,
      unit: 'frames',
      note:
        `of ${frames} frames in ${clips.length} clips (corpus ${corpus.fingerprint}: ${corpus.turns.length} utterances, ${corpus.overlaps.length} sounds during replies; ${FIXTURES.length} fixtures; ${TAIL_MS / 1000} s of room tone after each); ` +
        `${where.length} clips differ; windows the gate skipped ${Math.round(share * 100)} %` +
        (where.length > 0 ? `; first differences (clip@ms from its start): ${where.slice(0, 8).join('; ')}` : ''),
    });
  }
  rows.push(...(await endOfTurn(corpus.turns, gated, plain)), await overlaps(corpus.overlaps, gated, plain));
  rows.push(await quietRoom(gated));
  return rows;
}

async function both(gated: SileroFactory, plain: SileroFactory, audio: Int16Array): Promise<[boolean[], boolean[]]> {
  const [a, b] = await Promise.all([vadFrames(gated, audio), vadFrames(plain, audio)]);
  return [a.map((f) => f.speech), b.map((f) => f.speech)];
}

async function endOfTurn(turns: ReturnType<typeof buildCorpus>['turns'], gated: SileroFactory, plain: SileroFactory): Promise<Row[]> {
  progress('silero-gate: end of turn, Silero with fixed silence, with and without the gate');
  // Fixed silence: no probes, so the recogniser is never asked.
  const probes = new ProbeRecogniser({} as SpeechToText);
  const [a, b] = await Promise.all([runEndOfTurn({ name: 'gated', vad: gated, lexical: false }, turns, THRESHOLDS, probes), runEndOfTurn({ name: 'plain', vad: plain, lexical: false }, turns, THRESHOLDS, probes)]);
  let delays = 0;
  let cuts = 0;
  let outcomes = 0;
  a.forEach((ra, t) =>
    ra.clips.forEach((ca, c) => {
      const cb = b[t]!.clips[c]!;
      outcomes += 1 + ca.pauses.length;
      if (ca.delayMs !== cb.delayMs) delays += 1;
      cuts += ca.pauses.filter((p, k) => p.cut !== cb.pauses[k]!.cut).length;
    }),
  );
  return [
    {
      benchmark: name,
      metric: 'end-of-turn outcomes changed by the quiet gate',
      value: delays + cuts,
      unit: 'outcomes',
      note: `of ${outcomes} (turn-end delay per utterance and cut-or-not per thinking pause, ${turns.length} utterances × ${THRESHOLDS.length} thresholds, Silero with fixed silence, the turn-taking bench's replay: 300 ms of room tone before, 3 s after); delays changed ${delays}, pause cuts changed ${cuts}`,
    },
  ];
}

async function overlaps(clips: ReturnType<typeof buildCorpus>['overlaps'], gated: SileroFactory, plain: SileroFactory): Promise<Row> {
  progress('silero-gate: sounds during replies after 3 s of quiet');
  const changed: string[] = [];
  for (let i = 0; i < clips.length; i += PARALLEL) {
    const group = clips.slice(i, i + PARALLEL);
    const decided = await Promise.all(group.map((c) => both(gated, plain, concat(roomTone(3000), c.audio, roomTone(1000)))));
    decided.forEach(([a, b], k) => {
      const [sa, sb] = [voicing(a), voicing(b)];
      if (sa !== sb) changed.push(`${group[k]!.id} ${sa} vs ${sb}`);
    });
  }
  return {
    benchmark: name,
    metric: 'sounds during replies whose voiced frames or longest voiced run the quiet gate changes, after 3 s of quiet',
    value: changed.length,
    unit: 'clips',
    note: `of ${clips.length} (backchannels, interruptions, coughs, doors, clicks, tones, noise and babble at 20/10/5 dB SNR); voiced/longest run in frames, gate vs none: ${changed.join('; ')}`,
  };
}

function voicing(speech: boolean[]): string {
  let run = 0;
  let longest = 0;
  for (const s of speech) {
    run = s ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return `${speech.filter(Boolean).length}/${longest}`;
}

async function quietRoom(gated: SileroFactory): Promise<Row> {
  const before = { quiet: gated.quietWindows, run: gated.model.windows };
  await vadFrames(gated, roomTone(60_000));
  const skipped = gated.quietWindows - before.quiet;
  return {
    benchmark: name,
    metric: 'windows the quiet gate skipped, a quiet room (60 s of room tone, −66 dBFS RMS)',
    value: Math.round((skipped / (skipped + gated.model.windows - before.run)) * 1000) / 10,
    unit: '%',
    note: 'the network runs the first 16 windows (512 ms) of every quiet stretch',
  };
}
