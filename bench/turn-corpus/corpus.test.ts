import { beforeAll, describe, expect, it } from 'vitest';
import { buildCorpus, type Corpus } from './corpus.ts';
import { PAUSE_SPEAKERS, rmsDb, SPEAKERS } from './synth.ts';

/** The corpus builder at its smallest scale (one item of each kind and one paused sentence per voice): ~9 s of flite/espeak-ng/festival/sox per build on a loaded machine. */
describe('turn-taking corpus (bench/turn-corpus)', () => {
  let a: Corpus;
  beforeAll(() => {
    a = buildCorpus(0.04);
  }, 120000);

  it('is deterministic: a second build is sample-identical', () => {
    expect(buildCorpus(0.04).fingerprint).toBe(a.fingerprint);
  }, 120000);

  it('labels every utterance: speech to the end, silent labelled pauses, every voice at −26 dBFS', () => {
    expect(new Set(a.turns.map((t) => t.speaker)).size).toBe(SPEAKERS.length + PAUSE_SPEAKERS.length);
    for (const turn of a.turns) {
      expect(turn.endSample).toBe(turn.audio.length);
      expect(Math.abs(rmsDb(turn.audio.subarray(0, turn.pauses[0]?.atSample ?? turn.audio.length)) + 26)).toBeLessThan(1);
      for (const p of turn.pauses) {
        const gap = turn.audio.subarray(p.atSample, p.atSample + (p.ms * 16000) / 1000);
        expect(gap.every((s) => s === 0)).toBe(true);
        expect(p.ms).toBeGreaterThanOrEqual(200);
        expect(p.ms).toBeLessThanOrEqual(1200);
      }
    }
    expect(a.turns.some((t) => t.pauses.length > 0)).toBe(true);
  });

  it('splits by sentence: both halves present, no sentence in both', () => {
    const halves = (split: string) => new Set(a.turns.filter((t) => t.split === split).map((t) => t.text));
    const [tuning, heldout] = [halves('tuning'), halves('heldout')];
    expect(tuning.size).toBeGreaterThan(0);
    expect(heldout.size).toBeGreaterThan(0);
    for (const text of tuning) expect(heldout.has(text)).toBe(false);
  });

  it('labels sounds during replies: only spoken interruptions are interruptions; noise sits at its SNR', () => {
    for (const o of a.overlaps) expect(o.interruption).toBe(o.kind === 'interruption');
    for (const kind of ['backchannel', 'interruption', 'cough', 'door', 'click', 'tone', 'white', 'pink', 'brown', 'babble']) {
      expect(a.overlaps.some((o) => o.kind === kind)).toBe(true);
    }
    for (const o of a.overlaps.filter((x) => x.snrDb !== undefined)) expect(Math.abs(rmsDb(o.audio) - (-26 - o.snrDb!))).toBeLessThan(0.5);
  });
});
