import type { Split, TurnClip } from '../turn-corpus/corpus.ts';

/**
 * Turn ends judged against a clip's labels, one rule for the replay and the real server so their
 * figures differ only by what each did. Times are ms of clip time (0 = the clip's first sample;
 * a sample boundary n is at n / 16 ms).
 */

/** A turn end this soon after a pause's last silent sample still belongs to the pause: it was decided on the pause's silence. */
export const PAUSE_GRACE_MS = 100;

export interface ClipJudgement {
  split: Split;
  /** First turn end at or after the labelled end of speech, minus that end (none: the turn never ended). */
  delayMs: number | undefined;
  /** Per thinking pause: its length and whether a turn ended inside it. */
  pauses: Array<{ ms: number; cut: boolean }>;
  /** Turn ends before the end of speech outside every pause: a cut in the middle of speech. */
  elsewhere: number;
}

export function judgeClip(clip: Pick<TurnClip, 'split' | 'endSample' | 'pauses'>, endsMs: readonly number[]): ClipJudgement {
  const endMs = clip.endSample / 16;
  const windows = clip.pauses.map((pause) => ({ ms: pause.ms, from: pause.atSample / 16, to: pause.atSample / 16 + pause.ms + PAUSE_GRACE_MS }));
  const inPause = (e: number): boolean => windows.some((w) => e >= w.from && e < w.to);
  const after = endsMs.filter((e) => e >= endMs);
  return {
    split: clip.split,
    delayMs: after.length === 0 ? undefined : Math.min(...after) - endMs,
    pauses: windows.map((w) => ({ ms: w.ms, cut: endsMs.some((e) => e >= w.from && e < w.to) })),
    elsewhere: endsMs.filter((e) => e < endMs && !inPause(e)).length,
  };
}

/** Cut at any of its pauses. */
export function wasCut(judgement: ClipJudgement): boolean {
  return judgement.pauses.some((p) => p.cut);
}

/** End-of-turn delays further apart than this are a disagreement worth reading. */
export const DISAGREE_MS = 200;

/** How two judgements of one clip differ (empty: they agree), worded for the report. */
export function disagreements(server: ClipJudgement, replay: ClipJudgement): string[] {
  const out: string[] = [];
  if (wasCut(server) !== wasCut(replay)) out.push(`cut at the pause by the ${wasCut(server) ? 'server' : 'replay'} only`);
  if ((server.elsewhere > 0) !== (replay.elsewhere > 0)) out.push(`cut in mid-speech by the ${server.elsewhere > 0 ? 'server' : 'replay'} only`);
  const [s, r] = [server.delayMs, replay.delayMs];
  if (s !== undefined && r !== undefined && Math.abs(s - r) > DISAGREE_MS) out.push(`end of turn ${Math.round(s)} ms on the server, ${Math.round(r)} ms replayed`);
  if ((s === undefined) !== (r === undefined)) out.push(`no turn end after the speech on the ${s === undefined ? 'server' : 'replay'}`);
  return out;
}
