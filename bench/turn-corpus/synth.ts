import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWav } from '../../media/pcm.ts';
import { concat } from '../../media/testing/audio-stream.ts';

/**
 * Deterministic sound sources for the turn-taking corpus, all from Debian packages: flite,
 * espeak-ng and festival (text2wave) for speech, sox for noise and synthetic events (sox -R:
 * repeatable random numbers). Everything comes back as 16 kHz mono PCM16.
 */

export const RATE = 16000;

export interface Speaker {
  id: string;
  engine: 'flite' | 'espeak' | 'festival';
  voice: string;
  /** flite: duration stretch (>1 slower); espeak: words per minute; festival: Duration_Stretch. */
  rate: number;
}

export const SPEAKERS: Speaker[] = [
  { id: 'flite-rms', engine: 'flite', voice: 'rms', rate: 1 },
  { id: 'flite-slt-slow', engine: 'flite', voice: 'slt', rate: 1.2 },
  { id: 'flite-awb-fast', engine: 'flite', voice: 'awb', rate: 0.85 },
  { id: 'flite-kal16', engine: 'flite', voice: 'kal16', rate: 1 },
  { id: 'espeak-m3', engine: 'espeak', voice: 'en-us+m3', rate: 165 },
  { id: 'espeak-f2-fast', engine: 'espeak', voice: 'en+f2', rate: 200 },
  { id: 'festival-kal', engine: 'festival', voice: 'kal_diphone', rate: 1 },
  { id: 'festival-ked-slow', engine: 'festival', voice: 'ked_diphone', rate: 1.2 },
];

/** More voices and rates for the utterances with thinking pauses only (the end-of-turn part). */
export const PAUSE_SPEAKERS: Speaker[] = [
  { id: 'flite-slt', engine: 'flite', voice: 'slt', rate: 1 },
  { id: 'flite-rms-slow', engine: 'flite', voice: 'rms', rate: 1.25 },
  { id: 'espeak-f4-slow', engine: 'espeak', voice: 'en-us+f4', rate: 140 },
  { id: 'espeak-gb-m2-fast', engine: 'espeak', voice: 'en-gb+m2', rate: 185 },
];

const work = mkdtempSync(join(tmpdir(), 'parley-corpus-'));
process.once('exit', () => rmSync(work, { recursive: true, force: true }));
let counter = 0;

function run(command: string, args: string[], input?: string): void {
  const result = spawnSync(command, args, { input, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr || result.error?.message}`);
}

/** sox a source file (or -n with effects) to 16 kHz mono PCM16 and read it back. */
function sox(input: string[], effects: string[]): Int16Array {
  counter += 1;
  const out = join(work, `s${counter}.wav`);
  run('sox', ['-R', ...input, '-r', String(RATE), '-c', '1', '-b', '16', out, ...effects]);
  const { samples, sampleRate } = parseWav(readFileSync(out));
  if (sampleRate !== RATE) throw new Error(`sox wrote ${sampleRate} Hz`);
  return samples;
}

/** Leading and trailing silence trimmed, so sample 0 is the onset and the last is the end of speech. */
const TRIM = ['silence', '1', '0.02', '0.5%', 'reverse', 'silence', '1', '0.02', '0.5%', 'reverse'];

/**
 * TURN_CORPUS_CACHE=dir keeps each spoken phrase (16 kHz PCM16, keyed by engine, voice, rate and
 * text) so a rebuild synthesises only what is new: festival takes ~1 s a phrase. The corpus test
 * never uses it (it checks the synthesis itself is deterministic).
 */
export function speak(speaker: Speaker, text: string): Int16Array {
  const dir = process.env.TURN_CORPUS_CACHE;
  if (!dir) return synthesise(speaker, text);
  const file = join(dir, `${createHash('sha256').update(JSON.stringify([speaker.engine, speaker.voice, speaker.rate, text])).digest('hex').slice(0, 24)}.pcm`);
  if (existsSync(file)) {
    const bytes = readFileSync(file);
    return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2).slice();
  }
  const samples = synthesise(speaker, text);
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${file}.tmp`, Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
  renameSync(`${file}.tmp`, file);
  return samples;
}

function synthesise(speaker: Speaker, text: string): Int16Array {
  counter += 1;
  const raw = join(work, `t${counter}.wav`);
  if (speaker.engine === 'flite') run('flite', ['-voice', speaker.voice, '--setf', `duration_stretch=${speaker.rate}`, '-t', text, '-o', raw]);
  else if (speaker.engine === 'espeak') run('espeak-ng', ['-v', speaker.voice, '-s', String(speaker.rate), '-w', raw, text]);
  else run('text2wave', ['-eval', `(voice_${speaker.voice})`, '-eval', `(Parameter.set 'Duration_Stretch ${speaker.rate})`, '-o', raw], text);
  return normalise(sox([raw], TRIM), -26);
}

export type NoiseColour = 'white' | 'pink' | 'brown';

export function noise(colour: NoiseColour, ms: number): Int16Array {
  return sox(['-n'], ['synth', String(ms / 1000), `${colour}noise`]);
}

/** A synthetic cough: two band-passed noise bursts with a sharp attack and a fast decay. */
export function cough(variant: number): Int16Array {
  const centre = 500 + variant * 150;
  const burst = (len: number): Int16Array => sox(['-n'], ['synth', String(len), 'whitenoise', 'sinc', `${centre - 300}-${centre + 1800}`, 'fade', 'q', '0.008', String(len), String(len * 0.85)]);
  return normalise(concat(burst(0.22 + variant * 0.03), silenceOf(90), burst(0.16)), -22);
}

/** A door closing: a low thump with a short rattle. */
export function door(variant: number): Int16Array {
  const thump = sox(['-n'], ['synth', '0.45', 'brownnoise', 'lowpass', String(150 + variant * 40), 'fade', 'q', '0.004', '0.45', '0.4']);
  return normalise(thump, -20);
}

/** Desk clicks: a few 4 ms square pulses. */
export function clicks(count: number): Int16Array {
  const click = sox(['-n'], ['synth', '0.004', 'square', '1200', 'vol', '0.6']);
  const parts: Int16Array[] = [];
  for (let i = 0; i < count; i += 1) parts.push(click, silenceOf(120 + 37 * i));
  return concat(...parts);
}

/** A steady tone (the kind Chromium's fake microphone plays). */
export function tone(ms: number, hz = 1000): Int16Array {
  return normalise(sox(['-n'], ['synth', String(ms / 1000), 'sine', String(hz)]), -20);
}

export function silenceOf(ms: number): Int16Array {
  return new Int16Array(Math.round((RATE * ms) / 1000));
}

export function rmsDb(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return 10 * Math.log10(sum / Math.max(1, samples.length) / (32768 * 32768) + 1e-12);
}

export function scaleDb(samples: Int16Array, gainDb: number): Int16Array {
  const g = 10 ** (gainDb / 20);
  return Int16Array.from(samples, (s) => Math.max(-32768, Math.min(32767, Math.round(s * g))));
}

export function normalise(samples: Int16Array, targetDb: number): Int16Array {
  return scaleDb(samples, targetDb - rmsDb(samples));
}

/** Adds `layer` into `base` at `offset` samples (clipped), in place. */
export function mixInto(base: Int16Array, layer: Int16Array, offset = 0): void {
  for (let i = 0; i < layer.length && offset + i < base.length; i += 1) {
    base[offset + i] = Math.max(-32768, Math.min(32767, base[offset + i]! + layer[i]!));
  }
}
