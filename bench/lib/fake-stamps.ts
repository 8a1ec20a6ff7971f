import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * The fake model's own time out of each turn (issue 19's "server-added latency"). The fake
 * (fake-openai-process.ts with BENCH_FAKE_STAMPS) stamps, on the machine's one monotonic clock
 * (process.hrtime.bigint(), CLOCK_MONOTONIC in every process), when a request arrived and when
 * its first text chunk was handed to the kernel; the bench stamps when it sent input_text and when the first
 * text_delta came back. Per turn:
 *
 * - request side = fake arrival − client send: client → server hop, the server's work until the
 *   request is written, server → fake hop;
 * - response side = client's first text_delta − fake's first text write: fake → server hop, the
 *   server's work from the SSE bytes to the text_delta, server → client hop;
 * - their sum is the end-to-end latency minus the fake's own time.
 *
 * Each side holds one loopback hop between client and server (which the local path has too) and
 * one to or from the fake; a bench subtracts the former with the set_voice round trip.
 */

/** One measured turn: a unique input text, when it was sent (bench performance.now() ms) and its latency. */
export interface Turn {
  key: string;
  sentMs: number;
  latencyMs: number;
}

export interface TurnSplit {
  requestMs: number;
  responseMs: number;
  fakeMs: number;
  /**
   * Of fakeMs, the part after the fake's res.write() of its first text: Node's http holds that
   * chunk (the socket corked until process.nextTick) while the fake composes the rest of its
   * reply. The stamps before this change ended the fake's time at the res.write().
   */
  heldMs: number;
}

/** The fake's stamps of one request: arrival, first text sent, first text queued. */
export type FakeStamps = [bigint, bigint, bigint];

/** performance.now() ms → hrtime ns in this process (both are uv_hrtime; the origin differs). */
const ORIGIN_NS = ((): bigint => {
  let best = 0n;
  let bestSpan = Infinity;
  for (let i = 0; i < 50; i += 1) {
    const a = performance.now();
    const h = process.hrtime.bigint();
    const b = performance.now();
    if (b - a < bestSpan) {
      bestSpan = b - a;
      best = h - BigInt(Math.round(((a + b) / 2) * 1e6));
    }
  }
  return best;
})();

export function toNs(ms: number): bigint {
  return ORIGIN_NS + BigInt(Math.round(ms * 1e6));
}

/** Reads the fake's stamps file: key → [arrived, first text sent, first text queued]. */
export function readStamps(file: string): Map<string, FakeStamps> {
  const stamps = new Map<string, FakeStamps>();
  if (!existsSync(file)) return stamps;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [key, arrived, sent, queued] = line.split('\t');
    if (key && arrived && sent && queued) stamps.set(key, [BigInt(arrived), BigInt(sent), BigInt(queued)]);
  }
  return stamps;
}

/** Each turn the fake stamped, split into request side, response side and the fake's own time. */
export function splitTurns(turns: readonly Turn[], stamps: ReadonlyMap<string, FakeStamps>): TurnSplit[] {
  const out: TurnSplit[] = [];
  for (const t of turns) {
    const s = stamps.get(t.key);
    if (!s) continue;
    const sent = toNs(t.sentMs);
    const back = toNs(t.sentMs + t.latencyMs);
    out.push({ requestMs: Number(s[0] - sent) / 1e6, responseMs: Number(back - s[1]) / 1e6, fakeMs: Number(s[1] - s[0]) / 1e6, heldMs: Number(s[1] - s[2]) / 1e6 });
  }
  return out;
}
