import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { int16ToBytes, parseWav } from '../pcm.ts';
import { Resampler } from '../resampler.ts';
import { paced } from './realtime.ts';

const AUDIO_DIR = fileURLToPath(new URL('../../fixtures/audio/', import.meta.url));

export function loadFixture(name: string, rate = 16000): Int16Array {
  const { samples, sampleRate } = parseWav(readFileSync(`${AUDIO_DIR}${name}`));
  return sampleRate === rate ? samples : new Resampler(sampleRate, rate).process(samples);
}

export function silence(ms: number, rate = 16000): Int16Array {
  return new Int16Array(Math.round((rate * ms) / 1000));
}

/** Low-level background noise, so "silence" between clips looks like a real room. */
export function roomTone(ms: number, rate = 16000, amplitude = 30): Int16Array {
  const out = new Int16Array(Math.round((rate * ms) / 1000));
  let seed = 12345;
  for (let i = 0; i < out.length; i += 1) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out[i] = Math.round(((seed / 0x7fffffff) * 2 - 1) * amplitude);
  }
  return out;
}

export function concat(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** Where streamed audio goes: a WebSocket test client, or anything with the same two members. */
export interface AudioSink {
  /** Set once the sink closed; streaming stops there. */
  readonly closed: unknown;
  sendBinary(bytes: Uint8Array): void;
}

/**
 * Streams PCM to the server in real time, 20 ms per frame (`frameMs`), like a microphone.
 * Resolves when the last frame was sent, or the sink closed, or `signal` aborted.
 */
export async function streamRealtime(
  client: AudioSink,
  samples: Int16Array,
  rate = 16000,
  options: { frameMs?: number; signal?: AbortSignal } = {},
): Promise<{ startedAt: number }> {
  const frameMs = options.frameMs ?? 20;
  const frame = Math.round((rate * frameMs) / 1000);
  const startedAt = performance.now();
  await paced(
    Math.ceil(samples.length / frame),
    frameMs,
    (n) => client.sendBinary(int16ToBytes(samples.subarray(n * frame, Math.min(samples.length, (n + 1) * frame)))),
    () => options.signal?.aborted === true || Boolean(client.closed),
  );
  return { startedAt };
}

/** Noise with its energy high in the band, as in /s/ (a first difference of white noise), repeatable. */
export function hiss(ms: number, amplitude = 1500, rate = 16000): Int16Array {
  const white = roomTone(ms + 1000 / rate, rate, amplitude);
  return Int16Array.from({ length: white.length - 1 }, (_, i) => white[i + 1]! - white[i]!);
}
