import { createRequire } from 'node:module';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { concat } from '../media/testing/audio-stream.ts';
import { MEDIA_RATE, OPUS_FRAME_SAMPLES, OpusFrameDecoder, type OpusDecoderEngine } from '../media/webrtc/opus.ts';
import { OpusFrameEncoder } from '../media/webrtc/opus-encoder.ts';
import { fixture, tone } from './lib/audio.ts';
import { percentile, progress, round } from './lib/stats.ts';
import type { Row } from './types.ts';

/**
 * Uplink Opus decoding, the largest cost of the WebRTC media worker (issue 19, point 4): the
 * candidate decoders side by side in one process, each decoding the same packets to what the
 * server wants (PCM16 mono at 16 kHz, one 20 ms packet at a time, as the jitter buffer releases
 * them). µs per frame from performance.now() around each call (p50/p99), and the JS heap plus
 * ArrayBuffer bytes each frame leaves behind (measured over a window without a collection).
 *
 * The packets: 1.6 s of speech then room tone, 48 kHz mono, encoded by the server's own encoder
 * (what the bench's client peers send); a browser sends the same kind of mono Opus voice.
 */

export const name = 'opus-decode';

const FRAMES = Number(process.env.BENCH_OPUS_FRAMES ?? 20000);
const ALLOC_FRAMES = 200;
const ROUNDS = 3;

interface Candidate {
  label: string;
  /** Decodes `packets` (in order, one stream) to PCM16 frames; returns nothing, the work is the point. */
  make(): Promise<{ decode(packet: Uint8Array): Int16Array; free(): void }>;
}

/** The server's decoder (media/webrtc/opus.ts) with one engine or the other. */
function product(engine: OpusDecoderEngine): Candidate['make'] {
  return async () => {
    const d = new OpusFrameDecoder(MEDIA_RATE, engine);
    await d.ready;
    return d;
  };
}

const require = createRequire(import.meta.url);

/** @evan/opus's native addon (for reference: it cannot load in a worker thread, see opus-encoder.ts). */
function evanNative(): Candidate['make'] {
  const { Decoder } = require('@evan/opus/node/index.js') as typeof import('@evan/opus');
  return async () => {
    const d = new Decoder({ channels: 1, sample_rate: MEDIA_RATE });
    return {
      decode: (packet) => {
        const bytes = d.decode(packet);
        return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
      },
      free: () => undefined,
    };
  };
}

/** opusscript (emscripten build of libopus 1.4), if installed. */
function opusscript(): Candidate['make'] | undefined {
  let OpusScript: new (rate: number, channels: number) => { decode(b: Buffer): Buffer; delete(): void };
  try {
    // Named through a variable: it is optional (`npm i --no-save opusscript`), and the layering
    // check fails on any literal import that does not resolve.
    const optional = 'opusscript';
    OpusScript = require(optional);
  } catch {
    return undefined;
  }
  return async () => {
    const d = new OpusScript(MEDIA_RATE, 1);
    return {
      decode: (packet) => {
        const bytes = d.decode(Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength));
        return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
      },
      free: () => d.delete(),
    };
  };
}

function packets(): Uint8Array[] {
  const rate = 48000;
  const pcm = concat(fixture('twelve.wav', rate), tone(rate * 2, rate));
  const encoder = new OpusFrameEncoder();
  const out: Uint8Array[] = [];
  for (let i = 0; i + OPUS_FRAME_SAMPLES <= pcm.length; i += OPUS_FRAME_SAMPLES) out.push(Uint8Array.from(encoder.encode(pcm.subarray(i, i + OPUS_FRAME_SAMPLES))));
  return out;
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Bytes per frame a decoder leaves to the collector: a short window, no collection inside it. */
async function allocation(make: Candidate['make'], input: Uint8Array[]): Promise<{ heap: number; buffers: number } | undefined> {
  const d = await make();
  for (let i = 0; i < 50; i += 1) d.decode(input[i % input.length]!);
  // Twice: the first collection may leave ArrayBuffer backing stores to be freed by the next.
  gc();
  gc();
  // GC entries are delivered asynchronously: let the forced ones pass before observing.
  const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  await tick();
  let collections = 0;
  const observer = new PerformanceObserver((list) => (collections += list.getEntries().length));
  observer.observe({ entryTypes: ['gc'] });
  const before = process.memoryUsage();
  const kept: Int16Array[] = [];
  for (let i = 0; i < ALLOC_FRAMES; i += 1) kept.push(d.decode(input[i % input.length]!));
  const after = process.memoryUsage();
  await tick();
  observer.disconnect();
  d.free();
  if (collections > 0 || after.arrayBuffers < before.arrayBuffers) return undefined;
  return { heap: (after.heapUsed - before.heapUsed) / ALLOC_FRAMES, buffers: (after.arrayBuffers - before.arrayBuffers) / ALLOC_FRAMES };
}

export async function run(): Promise<Row[]> {
  const input = packets();
  const candidates: Candidate[] = [
    { label: 'opus-decoder (WASM, Float32 → Int16; before)', make: product('opus-decoder') },
    { label: 'libopus-wasm: @evan/opus WASM (Int16 out; now)', make: product('libopus-wasm') },
    { label: '@evan/opus native addon (main thread only)', make: evanNative() },
    ...(opusscript() ? [{ label: 'opusscript (emscripten libopus 1.4)', make: opusscript()! }] : []),
  ];
  for (const c of candidates) (await c.make()).free();
  const times = new Map<string, number[]>(candidates.map((c) => [c.label, []]));
  // Rounds interleave the candidates so they share the machine's load; each round is a fresh
  // decoder over the whole stream, repeated to FRAMES / ROUNDS frames.
  for (let r = 0; r < ROUNDS; r += 1) {
    for (const c of candidates) {
      progress(`opus-decode: round ${r + 1}/${ROUNDS}, ${c.label}`);
      const d = await c.make();
      const out = times.get(c.label)!;
      for (let i = 0; i < FRAMES / ROUNDS; i += 1) {
        const t0 = performance.now();
        d.decode(input[i % input.length]!);
        out.push((performance.now() - t0) * 1000);
      }
      d.free();
    }
  }
  const reference = percentile(times.get(candidates[0]!.label)!, 50);
  const rows: Row[] = [];
  for (const c of candidates) {
    const xs = times.get(c.label)!;
    const alloc = await allocation(c.make, input);
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    rows.push({
      benchmark: name,
      metric: `Opus decode to 16 kHz PCM16 per 20 ms frame p50, ${c.label}`,
      value: round(percentile(xs, 50), 1),
      unit: 'µs',
      note:
        `p99 ${round(percentile(xs, 99), 1)} µs, mean ${round(mean, 1)} µs; ${round(percentile(xs, 50) / reference, 2)}× opus-decoder's p50; ` +
        `${alloc ? `leaves ${Math.round(alloc.heap)} B of JS heap and ${Math.round(alloc.buffers)} B of ArrayBuffers per frame` : 'allocation not measured (a collection fell in the window)'}; ` +
        `${xs.length} frames in ${ROUNDS} interleaved rounds of one decoder each, packets of 48 kHz mono speech + room tone from the server's encoder (${input.length} packets looped)`,
    });
  }
  return rows;
}
