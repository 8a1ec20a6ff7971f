import { createHash } from 'node:crypto';
import { concat } from '../../media/testing/audio-stream.ts';
import { clicks, cough, door, mixInto, noise, normalise, PAUSE_SPEAKERS, scaleDb, silenceOf, speak, SPEAKERS, tone, RATE, type NoiseColour } from './synth.ts';

/**
 * The labelled turn-taking corpus, built deterministically from the recipes below (same inputs,
 * same Debian packages → the same samples; `fingerprint` hashes them). Speech is normalised to
 * −26 dBFS RMS; noise at S dB SNR sits at −26 − S dBFS.
 *
 * - `turns`: one user utterance each, some with a thinking pause of 200–1,200 ms at a point where
 *   the sentence is not finished (after "and", "um", "to", "the"...). Labels: where speech ends
 *   for good, and where each pause is. Each sentence belongs to the tuning or the held-out half
 *   (`split`), so a rule tuned on one half can be judged on sentences it never saw.
 * - `overlaps`: sounds made while the assistant speaks: backchannels (TTS words and synthetic
 *   hums), real interruptions, coughs, doors, clicks, tones, white/pink/brown noise and babble at
 *   20/10/5 dB SNR. Label: whether it is a real interruption.
 */

export interface TurnClip {
  id: string;
  speaker: string;
  audio: Int16Array;
  /** Sample where the last word ends. */
  endSample: number;
  /** Thinking pauses inside the utterance. */
  pauses: Array<{ atSample: number; ms: number; after: string }>;
  text: string;
  split: Split;
}

/** Sentences alternate between the halves in the lists below (similar sentences sit side by side). */
export type Split = 'tuning' | 'heldout';

export type OverlapKind = 'backchannel' | 'interruption' | 'cough' | 'door' | 'click' | 'tone' | 'white' | 'pink' | 'brown' | 'babble';

export interface OverlapClip {
  id: string;
  kind: OverlapKind;
  /** Noise kinds only. */
  snrDb?: number;
  audio: Int16Array;
  /** The label: a real interruption (the reply should stop) or not (it should go on). */
  interruption: boolean;
  text?: string;
}

const COMPLETE = [
  'what is the weather like in paris today',
  'can you book a table for four at eight',
  'how long does the train take to boston',
  'i need a taxi to the airport tomorrow morning',
  'please send the report to my manager',
  'my flight number is five four three',
];

/**
 * [before the pause, after it]: the first part does not finish the thought. Thinking pauses after
 * conjunctions, fillers, articles, possessives and prepositions, in statements and in questions
 * (a question that pauses before its end is where a "complete question" rule goes wrong).
 */
const PAUSED: Array<[string, string]> = [
  ['i would like to order a large pizza and', 'a bottle of water'],
  ['can you remind me to', 'call my sister tonight'],
  ['the meeting is on tuesday um', 'no wait wednesday'],
  ['please add milk eggs and', 'some bread to the list'],
  ['i want to book a flight to', 'denver next friday'],
  ['send a message to the', 'plumber about the leak'],
  ['could you tell me the', 'opening hours of the museum'],
  ['what time does the', 'pharmacy close tonight'],
  ['i was thinking we could go to', 'the beach on saturday'],
  ['set an alarm for uh', 'six thirty tomorrow'],
  ['my address is twelve oak street but', 'send it to my office'],
  ['i need to pick up my', 'glasses from the shop'],
  ['how do i get from the station to', 'the city centre'],
  ['is there a pharmacy near the', 'hotel that is open late'],
  ['we need chairs tables and um', 'maybe a few lamps'],
  ['turn the lights off in the kitchen and', 'lock the front door'],
  ['can you check if my', 'package has arrived'],
  ['i am looking for a restaurant with', 'a view of the river'],
  ['the password is on a note in the', 'top drawer of my desk'],
  ['play something relaxing like', 'soft piano music'],
  ['tell my boss that i will be late because', 'the bus broke down'],
  ['where can i buy a charger for my', 'old laptop'],
  ['well i think the best option is uh', 'the second one'],
  ['do you know if the', 'library is open on sunday'],
];
const splitOf = (list: readonly unknown[], item: unknown): Split => (list.indexOf(item) % 2 === 0 ? 'tuning' : 'heldout');
export const PAUSE_MS = [200, 400, 600, 800, 1000, 1200];

const BACKCHANNELS = ['yeah', 'okay', 'right', 'sure', 'yep', 'uh huh', 'i see', 'got it'];
const INTERRUPTIONS = ['wait stop', 'no i meant tuesday', 'can you repeat that please', 'hold on a second', 'actually make it three', 'stop please i have a question'];
export const SNRS = [20, 10, 5];
const SPEECH_DB = -26;

export interface Corpus {
  turns: TurnClip[];
  overlaps: OverlapClip[];
  fingerprint: string;
}

/** `scale` < 1 builds a subset (every speaker, fewer items): CI's determinism check. */
export function buildCorpus(scale = 1): Corpus {
  const turns: TurnClip[] = [];
  const overlaps: OverlapClip[] = [];
  const take = <T>(list: T[], n: number, offset: number): T[] => Array.from({ length: Math.max(1, Math.round(n * scale)) }, (_, i) => list[(offset + i) % list.length]!);
  // Every voice speaks every paused sentence; pause lengths rotate so each sentence gets each
  // length from two voices. The extra voices (PAUSE_SPEAKERS) only speak utterances.
  [...SPEAKERS, ...PAUSE_SPEAKERS].forEach((speaker, s) => {
    for (const text of take(COMPLETE, 3, s)) {
      const audio = speak(speaker, text);
      turns.push({ id: `${speaker.id}/${slug(text)}`, speaker: speaker.id, audio, endSample: audio.length, pauses: [], text, split: splitOf(COMPLETE, text) });
    }
    for (const pair of take(PAUSED, PAUSED.length, s)) {
      const [a, b] = pair;
      const ms = PAUSE_MS[(PAUSED.indexOf(pair) + s) % PAUSE_MS.length]!;
      const first = speak(speaker, a);
      const audio = concat(first, silenceOf(ms), speak(speaker, b));
      turns.push({ id: `${speaker.id}/${slug(a)}-${ms}`, speaker: speaker.id, audio, endSample: audio.length, pauses: [{ atSample: first.length, ms, after: a }], text: `${a} ${b}`, split: splitOf(PAUSED, pair) });
    }
  });
  SPEAKERS.forEach((speaker, s) => {
    for (const text of take(BACKCHANNELS, 3, s)) overlaps.push({ id: `bc/${speaker.id}/${slug(text)}`, kind: 'backchannel', audio: speak(speaker, text), interruption: false, text });
    for (const text of take(INTERRUPTIONS, 3, s)) overlaps.push({ id: `int/${speaker.id}/${slug(text)}`, kind: 'interruption', audio: speak(speaker, text), interruption: true, text });
  });
  for (let v = 0; v < Math.max(1, Math.round(4 * scale)); v += 1) {
    overlaps.push({ id: `bc/hum-${v}`, kind: 'backchannel', audio: hum(v), interruption: false, text: 'mm-hm' });
    overlaps.push({ id: `cough-${v}`, kind: 'cough', audio: cough(v), interruption: false });
    overlaps.push({ id: `cough-${v + 4}`, kind: 'cough', audio: cough(v + 4), interruption: false });
    overlaps.push({ id: `door-${v}`, kind: 'door', audio: door(v), interruption: false });
    overlaps.push({ id: `click-${v}`, kind: 'click', audio: clicks(3 + 3 * v), interruption: false });
    overlaps.push({ id: `tone-${v}`, kind: 'tone', audio: tone(1500, [1000, 440, 800, 1200][v]), interruption: false });
  }
  const babbleSource = concat(...SPEAKERS.slice(0, 5).map((sp, i) => speak(sp, COMPLETE[i]!)));
  for (const snr of SNRS) {
    for (let v = 0; v < Math.max(1, Math.round(4 * scale)); v += 1) {
      for (const colour of ['white', 'pink', 'brown'] as NoiseColour[]) {
        overlaps.push({ id: `${colour}-${snr}dB-${v}`, kind: colour, snrDb: snr, audio: normalise(noise(colour, 1500 + 250 * v), SPEECH_DB - snr), interruption: false });
      }
      overlaps.push({ id: `babble-${snr}dB-${v}`, kind: 'babble', snrDb: snr, audio: babble(babbleSource, v, SPEECH_DB - snr), interruption: false });
    }
  }
  const hash = createHash('sha256');
  for (const clip of [...turns, ...overlaps]) hash.update(clip.id).update(Buffer.from(clip.audio.buffer, clip.audio.byteOffset, clip.audio.byteLength));
  return { turns, overlaps, fingerprint: hash.digest('hex').slice(0, 16) };
}

/** "mm-hm" hummed: two voiced syllables (a buzz through a low-pass), the second rising. */
function hum(variant: number): Int16Array {
  const f0 = 110 + variant * 25;
  const syllable = (ms: number, from: number, to: number): Int16Array => {
    const n = Math.round((RATE * ms) / 1000);
    const out = new Int16Array(n);
    let phase = 0;
    let lp = 0;
    for (let i = 0; i < n; i += 1) {
      const f = from + ((to - from) * i) / n;
      phase = (phase + f / RATE) % 1;
      const buzz = phase * 2 - 1;
      lp += 0.08 * (buzz - lp);
      const env = Math.min(1, i / (RATE * 0.03), (n - i) / (RATE * 0.04));
      out[i] = Math.round(lp * env * 12000);
    }
    return out;
  };
  return normalise(concat(syllable(220, f0, f0 * 0.95), silenceOf(70), syllable(260, f0 * 0.95, f0 * 1.25)), SPEECH_DB);
}

/** Several voices talking over each other, 2 s of it, at the given level. */
function babble(source: Int16Array, variant: number, levelDb: number): Int16Array {
  const len = RATE * 2;
  const out = new Int16Array(len);
  for (let voice = 0; voice < 4; voice += 1) {
    const start = Math.floor(((variant * 7 + voice * 13) % 29) / 29 * (source.length - len));
    mixInto(out, scaleDb(source.subarray(start, start + len), -6));
  }
  return normalise(out, levelDb);
}

function slug(text: string): string {
  return text.replace(/[^a-z0-9]+/g, '-').slice(0, 32);
}
