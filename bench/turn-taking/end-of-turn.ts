import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Endpointer, endpointerOptions, type TurnCue } from '../../media/endpointer.ts';
import { rmsDbfs } from '../../media/pcm.ts';
import { VAD_FRAME_MS, VAD_FRAME_SAMPLES, type VadFactory } from '../../media/vad.ts';
import { vadFrames } from '../../media/testing/vad-frames.ts';
import { concat, roomTone } from '../../media/testing/audio-stream.ts';
import type { SpeechToText, TranscriptionStream } from '../../session/providers/asr.ts';
import { Decoder } from '../../session/providers/pocketsphinx/decoder.mjs';
import { lexicalCue, words } from '../../session/voice/lexical-cue.ts';
import type { Split, TurnClip } from '../turn-corpus/corpus.ts';
import { judgeClip, type ClipJudgement } from './judge.ts';

/**
 * End of turn over the labelled utterances, replayed frame by frame through the real detector
 * and the real endpointer: VAD decisions are computed once per clip and detector, then every
 * turn_end_threshold is replayed on them. With the lexical cue, each probe's speech is really
 * recognised (warm pocketsphinx, its partial result) and the cue takes effect ceil(latency /
 * 20 ms) frames after the probe, latency being that request's measured wall time once the audio
 * had been handed over at streaming pace; probes are cached by (clip, detector, segment audio).
 */

/** Room tone before each utterance as it is streamed (clip time 0 comes this long after the stream's start). */
export const LEAD_MS = 300;
const TAIL_MS = 3000;

/** An utterance as the detector hears it: room tone, the clip, 3 s of room tone. */
export function streamedClip(clip: Pick<TurnClip, 'audio'>): Int16Array {
  return concat(roomTone(LEAD_MS), clip.audio, roomTone(TAIL_MS));
}

export interface EotSystem {
  name: string;
  vad: VadFactory;
  lexical: boolean;
  /** The words → cue rule (default: the product's lexicalCue). */
  cue?: (text: string) => TurnCue;
  /** false: the rules before the recheck (its answer is "unchanged" at once). */
  recheck?: boolean;
  /** false: the recheck without the last word's posterior (the rules before it). */
  posterior?: boolean;
  /** Overrides the endpointer's minLastWordPosterior (the bench's sweep). */
  minLastWordPosterior?: number;
  /** false: the recheck without the language model's sentence-end probability (the rules before it). */
  sentenceEnd?: boolean;
  /** Overrides the endpointer's minSentenceEndProbability (the bench's sweep). */
  minSentenceEndProbability?: number;
  /** Overrides the endpointer's sureSentenceEndProbability (the bench's sweep). */
  sureSentenceEndProbability?: number;
}

export interface EotResult {
  threshold: number;
  /** End-of-turn delay after the true end, one per clip whose turn ended after its end. */
  delays: number[];
  /** Per pause: its length and whether a turn ended inside it. */
  pauses: Array<{ ms: number; cut: boolean }>;
  /** The same per clip (in the order replayed), with the corpus half it belongs to (forSplit). */
  clips: ClipJudgement[];
}

/** The result over one half of the corpus only. */
export function forSplit(r: EotResult, split: Split): EotResult {
  const clips = r.clips.filter((c) => c.split === split);
  return { threshold: r.threshold, clips, delays: clips.flatMap((c) => (c.delayMs === undefined ? [] : [c.delayMs])), pauses: clips.flatMap((c) => c.pauses) };
}

interface Decoded {
  text: string;
  latencyMs: number;
  /** The recogniser's posterior of the last word (null: none, or a recogniser without one). */
  posterior: number | null;
}

/**
 * For iterating on the end-of-turn rules (TURN_PROBE_CACHE=file): the probes' words and
 * latencies are kept in a file and reused, so a replay decodes nothing it has decoded before;
 * TURN_PROBE_LATENCY_MS=n replaces every latency by n (the rules alone, whatever the load).
 * The bench itself runs with neither.
 */
export interface ProbeCacheOptions {
  file?: string;
  fixedLatencyMs?: number;
}

export class ProbeRecogniser {
  private readonly cache = new Map<string, Decoded>();
  decodes = 0;
  latencies: number[] = [];
  /** The language model's sentence-end probability is a function of the words alone: one decoder's model answers for every probe. */
  private lm: Decoder | undefined;
  /** The recogniser hearing each segment being replayed, and how many of its frames it has. */
  private readonly open = new Map<string, { stream: TranscriptionStream; written: number }>();

  constructor(
    private readonly stt: SpeechToText,
    private readonly options: ProbeCacheOptions = {},
  ) {
    if (options.file && existsSync(options.file)) for (const [k, v] of Object.entries(JSON.parse(readFileSync(options.file, 'utf8')) as Record<string, Decoded>)) this.cache.set(k, v);
  }

  /** The replay of these segments is over. */
  release(prefix: string): void {
    for (const [segment, { stream }] of this.open) {
      if (!segment.startsWith(prefix)) continue;
      stream.abort();
      this.open.delete(segment);
    }
  }

  /** P(</s> | the last two words) as the recogniser thread answers it (Decoder.sentenceEnd on its partial result). */
  sentenceEnd(text: string): number | undefined {
    this.lm ??= new Decoder();
    return this.lm.sentenceEnd(text);
  }

  save(): void {
    if (this.options.file) writeFileSync(this.options.file, JSON.stringify(Object.fromEntries(this.cache)));
  }

  /**
   * The words of `frames` (a segment's audio so far; `segment` names it, `key` this point in it).
   * As in VoiceInput, one recogniser hears the segment as it grows and is asked at each point.
   */
  async decode(segment: string, key: string, frames: Int16Array[]): Promise<Decoded> {
    const hit = this.cache.get(key);
    // Entries cached before the posterior was asked for are decoded again.
    if (hit && 'posterior' in hit) return this.options.fixedLatencyMs === undefined ? hit : { ...hit, latencyMs: this.options.fixedLatencyMs };
    let open = this.open.get(segment);
    if (!open || !open.stream.partial) {
      open?.stream.abort();
      open = { stream: this.stt.open(), written: 0 };
      this.open.set(segment, open);
    }
    const fresh = frames.length - open.written;
    for (const f of frames.slice(open.written)) open.stream.write(f);
    open.written = frames.length;
    // Live, the recogniser decodes while the user talks; give it that time before it must answer
    // (not when the latency is fixed: only the words count then, and they are the same).
    if (this.options.fixedLatencyMs === undefined) await new Promise((r) => setTimeout(r, fresh * VAD_FRAME_MS * 0.3));
    const t0 = performance.now();
    const stream = open.stream;
    // As VoiceInput does: a partial result when the recogniser has them, else it is closed.
    const text = stream.partial ? await stream.partial() : await stream.finish();
    const posterior = (await stream.lastWordPosterior?.()) ?? null;
    const result = { text, posterior, latencyMs: performance.now() - t0 };
    this.decodes += 1;
    this.latencies.push(result.latencyMs);
    this.cache.set(key, result);
    if (this.decodes % 50 === 0) this.save();
    return this.options.fixedLatencyMs === undefined ? result : { ...result, latencyMs: this.options.fixedLatencyMs };
  }
}

/** One line per probe and per turn end, for studying the rules (bench/turn-taking/eot-only.ts). */
export type EotTrace = (line: Record<string, unknown>) => void;

/** `parallel` replays that many clips at once (eot-only.ts, to fill a probe cache); the bench replays one at a time. */
export async function runEndOfTurn(system: EotSystem, clips: TurnClip[], thresholds: number[], probes: ProbeRecogniser, trace?: EotTrace, parallel = 1): Promise<EotResult[]> {
  const decided: Array<Awaited<ReturnType<typeof vadFrames>>> = [];
  for (const clip of clips) decided.push(await vadFrames(system.vad, streamedClip(clip)));
  const results: EotResult[] = [];
  for (const threshold of thresholds) {
    const ends: number[][] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let c = next++; c < clips.length; c = next++) ends[c] = await replay(system, clips[c]!, decided[c]!, threshold, probes, trace);
    };
    await Promise.all(Array.from({ length: parallel }, worker));
    const perClip = clips.map((clip, c) => judgeClip(clip, ends[c]!.map((e) => e - LEAD_MS)));
    results.push({ threshold, clips: perClip, delays: perClip.flatMap((c) => (c.delayMs === undefined ? [] : [c.delayMs])), pauses: perClip.flatMap((c) => c.pauses) });
  }
  return results;
}

/** Turn ends (ms from the clip's start) for one clip at one threshold. */
async function replay(system: EotSystem, clip: TurnClip, frames: Array<{ frame: Int16Array; speech: boolean }>, threshold: number, probes: ProbeRecogniser, trace?: EotTrace): Promise<number[]> {
  const options = endpointerOptions(threshold, false, system.lexical);
  if (system.minLastWordPosterior !== undefined) options.minLastWordPosterior = system.minLastWordPosterior;
  if (system.minSentenceEndProbability !== undefined) options.minSentenceEndProbability = system.minSentenceEndProbability;
  if (system.sureSentenceEndProbability !== undefined) options.sureSentenceEndProbability = system.sureSentenceEndProbability;
  const endpointer = new Endpointer(options);
  const cueOf = system.cue ?? lexicalCue;
  const ends: number[] = [];
  const prefix = `${system.vad.provider}|${clip.id}|`;
  let segment: Int16Array[] = [];
  let segmentStart = 0;
  let cue: { atFrame: number; value: TurnCue } | undefined;
  let recheck: { atFrame: number; changed: boolean; posterior: number | undefined; sentenceEnd: number | undefined } | undefined;
  let probe: { frame: number; text: string } | undefined;
  for (const [i, { frame, speech }] of frames.entries()) {
    if (cue && i >= cue.atFrame) {
      endpointer.setCue(cue.value);
      cue = undefined;
    }
    if (recheck && i >= recheck.atFrame) {
      endpointer.setRecheck(recheck.changed, recheck.posterior, recheck.sentenceEnd);
      recheck = undefined;
    }
    if (endpointer.active) segment.push(frame);
    for (const event of endpointer.push(frame, speech, rmsDbfs(frame))) {
      if (event.type === 'speech_start') {
        segment = [...event.preroll];
        segmentStart = i;
      } else if (event.type === 'pause_probe') {
        const decoded = await probes.decode(`${prefix}${segmentStart}`, `${prefix}${segmentStart}|${i}`, segment);
        cue = { atFrame: i + Math.ceil(decoded.latencyMs / VAD_FRAME_MS), value: cueOf(decoded.text) };
        probe = { frame: i, text: decoded.text };
        trace?.({ clip: clip.id, threshold, probeMs: i * VAD_FRAME_MS - LEAD_MS, latencyMs: Math.round(decoded.latencyMs), text: decoded.text, posterior: decoded.posterior, cue: cue.value });
      } else if (event.type === 'pause_recheck') {
        if (system.recheck === false || !probe) {
          endpointer.setRecheck(false);
          continue;
        }
        const again = await probes.decode(`${prefix}${segmentStart}`, `${prefix}${segmentStart}|${probe.frame}|+${i - probe.frame}`, segment);
        const changed = words(again.text).join(' ') !== words(probe.text).join(' ');
        const sentenceEnd = system.sentenceEnd === false ? undefined : probes.sentenceEnd(again.text);
        recheck = { atFrame: i + Math.ceil(again.latencyMs / VAD_FRAME_MS), changed, posterior: system.posterior === false ? undefined : (again.posterior ?? undefined), sentenceEnd };
        trace?.({ clip: clip.id, threshold, recheckMs: i * VAD_FRAME_MS - LEAD_MS, text: again.text, posterior: again.posterior, sentenceEnd, changed });
      } else if (event.type === 'speech_resumed') {
        cue = undefined;
        recheck = undefined;
      } else if (event.type === 'turn_end') {
        ends.push(((i + 1) * VAD_FRAME_SAMPLES * 1000) / 16000);
        trace?.({ clip: clip.id, threshold, turnEndMs: (i + 1) * VAD_FRAME_MS - LEAD_MS, pauses: clip.pauses.map((p) => [Math.round(p.atSample / 16), p.ms]), endMs: Math.round(clip.endSample / 16) });
      }
    }
  }
  probes.release(prefix);
  return ends;
}
