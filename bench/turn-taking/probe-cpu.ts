import { concat, roomTone } from '../../media/testing/audio-stream.ts';
import { Decoder } from '../../session/providers/pocketsphinx/decoder.mjs';
import { round } from '../lib/stats.ts';
import type { TurnClip } from '../turn-corpus/corpus.ts';
import type { Row } from '../types.ts';

/** 128 ms: the slices PocketsphinxSpeechToText hands a recogniser. */
const SLICE = 2048;

/**
 * What a pause costs the recogniser, on one thread with nothing else in it (process CPU, this
 * thread only): each paused utterance is decoded up to 100 ms into its pause, then the probe's
 * partial result, the recheck's second one 60 ms later, the last word's posterior (its word
 * lattice) and the language model's sentence-end probability are timed, beside the decoding of the speech itself.
 */
export function probeCpu(clips: TurnClip[]): Row[] {
  const decoder = new Decoder();
  let decodeUs = 0;
  let speechMs = 0;
  const partialUs: number[] = [];
  const posteriorUs: number[] = [];
  const sentenceEndUs: number[] = [];
  const timed = (f: () => unknown): number => {
    const before = process.cpuUsage();
    f();
    const used = process.cpuUsage(before);
    return used.user + used.system;
  };
  for (const clip of clips) {
    const pause = clip.pauses[0];
    if (!pause) continue;
    const audio = concat(roomTone(200), clip.audio.subarray(0, pause.atSample), new Int16Array(Math.round(16 * 160)));
    decoder.start();
    let at = 0;
    const feed = (to: number): void => {
      for (; at < to; at += SLICE) {
        const slice = audio.slice(at, Math.min(to, at + SLICE));
        decodeUs += timed(() => decoder.process(slice));
      }
    };
    feed(audio.length - 16 * 60);
    speechMs += (audio.length - 16 * 60) / 16;
    partialUs.push(timed(() => decoder.partial()));
    feed(audio.length);
    speechMs += (16 * 60) / 16;
    partialUs.push(timed(() => decoder.partial()));
    posteriorUs.push(timed(() => decoder.lastWord()));
    sentenceEndUs.push(timed(() => decoder.sentenceEnd()));
    decoder.end();
  }
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  const decodePerSecond = (decodeUs / speechMs) * 1000;
  const perPause = 2 * mean(partialUs) + mean(posteriorUs) + mean(sentenceEndUs);
  const note = `${clips.length} paused utterances decoded up to 160 ms into their pause on one thread, process.cpuUsage around each call; decoding the audio itself: ${round(decodePerSecond / 1000, 1)} ms CPU per second of speech`;
  return [
    { benchmark: 'turn-taking', metric: 'recogniser CPU per partial result (the probe, and the 160 ms recheck)', value: round(mean(partialUs), 0), unit: 'µs', note },
    { benchmark: 'turn-taking', metric: "recogniser CPU per last-word posterior (its word lattice)", value: round(mean(posteriorUs), 0), unit: 'µs', note: `max ${round(Math.max(...posteriorUs), 0)} µs; ${note}` },
    { benchmark: 'turn-taking', metric: 'recogniser CPU per sentence-end probability (its language model, with the partial result it scores)', value: round(mean(sentenceEndUs), 0), unit: 'µs', note: `max ${round(Math.max(...sentenceEndUs), 0)} µs; ${note}` },
    {
      benchmark: 'turn-taking',
      metric: 'recogniser CPU per pause (probe + recheck + posterior + sentence end)',
      value: round(perPause / 1000, 2),
      unit: 'ms',
      note: `= ${round((100 * perPause) / decodePerSecond, 1)} % of decoding one second of speech; a session pays it at each pause of 160 ms or more (its turn ends included)`,
    },
  ];
}
