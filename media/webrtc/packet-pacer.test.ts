import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PacerClock } from '../pacer-clock.ts';
import { PacketPacer } from './packet-pacer.ts';

const packet = (n: number): Uint8Array => Uint8Array.of(n);
/** Simulated time passes: the pacer's timers due meanwhile fire, on the exact instants. */
const passTime = (ms: number) => vi.advanceTimersByTimeAsync(ms);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('PacketPacer (a media worker sends downlink packets at their slots)', () => {
  it('sends the first three of a spurt at once, then one per 20 ms slot on the clock grid', async () => {
    const clock = new PacerClock(5);
    const sent: Array<{ n: number; at: number }> = [];
    const late: number[] = [];
    const pacer = new PacketPacer(clock, (p) => sent.push({ n: p[0]!, at: performance.now() }), (ms) => late.push(ms));
    for (let i = 0; i < 8; i += 1) pacer.push(packet(i));
    expect(sent.map((s) => s.n)).toEqual([0, 1, 2]);
    const origin = (clock as unknown as { origin: number }).origin;
    await passTime(140);
    expect(sent.map((s) => s.n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // Packet k ≥ 3 is due at the first grid instant after the start + 20·(k − 3), never sent before it.
    for (const { n, at } of sent.slice(3)) expect(at).toBeGreaterThanOrEqual(origin + 20 * (n - 3) - 0.25);
    expect(late).toHaveLength(5);
    await passTime(60);
    expect(clock.running).toBe(false);
  });

  it('clear() drops what was not sent and ends the spurt; the next packet opens a new one', async () => {
    const clock = new PacerClock(5);
    const sent: number[] = [];
    const pacer = new PacketPacer(clock, (p) => sent.push(p[0]!));
    for (let i = 0; i < 6; i += 1) pacer.push(packet(i));
    expect(pacer.clear()).toBe(3);
    expect(clock.running).toBe(false);
    await passTime(60);
    expect(sent).toEqual([0, 1, 2]);
    pacer.push(packet(9));
    expect(sent).toEqual([0, 1, 2, 9]);
    pacer.clear();
  });

  it('pause() holds every queued packet; resume() sends them on in order, none lost or repeated', async () => {
    const clock = new PacerClock(5);
    const sent: number[] = [];
    const pacer = new PacketPacer(clock, (p) => sent.push(p[0]!));
    for (let i = 0; i < 6; i += 1) pacer.push(packet(i));
    pacer.pause();
    pacer.push(packet(6));
    await passTime(120);
    expect(sent).toEqual([0, 1, 2]);
    pacer.resume();
    await passTime(120);
    expect(sent).toEqual([0, 1, 2, 3, 4, 5, 6]);
    pacer.pause();
    pacer.push(packet(7));
    expect(pacer.clear()).toBe(1);
    pacer.push(packet(8));
    expect(sent).toEqual([0, 1, 2, 3, 4, 5, 6, 8]);
    pacer.clear();
  });

  it('keeps the spurt through a late handover: a late packet goes at once, without a new burst', async () => {
    const clock = new PacerClock(5);
    const sent: Array<{ n: number; at: number }> = [];
    const pacer = new PacketPacer(clock, (p) => sent.push({ n: p[0]!, at: performance.now() }));
    for (let i = 0; i < 4; i += 1) pacer.push(packet(i));
    await passTime(30); // packet 3 went at its slot; the queue is empty and its next slot passes
    expect(sent.map((s) => s.n)).toEqual([0, 1, 2, 3]);
    pacer.push(packet(4));
    pacer.push(packet(5));
    // Packet 4 was late for its slot: it leaves at once; packet 5 keeps the old timeline's slot.
    expect(sent.map((s) => s.n)).toEqual([0, 1, 2, 3, 4]);
    await passTime(40);
    expect(sent.map((s) => s.n)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(sent[5]!.at - sent[4]!.at).toBeGreaterThan(5);
    pacer.clear();
  });

  it('ends a spurt once nothing came for 40 ms past a slot', async () => {
    const clock = new PacerClock(5);
    const pacer = new PacketPacer(clock, () => undefined);
    pacer.push(packet(0));
    expect(clock.running).toBe(true);
    await passTime(90);
    expect(clock.running).toBe(false);
  });
});
