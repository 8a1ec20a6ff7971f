import { describe, expect, it } from 'vitest';
import { DownlinkPacer } from './downlink-pacer.ts';
import { PacerClock } from './pacer-clock.ts';

/** A lead longer than anything queued sends every whole frame at once, with no clock tick needed. */
function pacerSendingAtOnce(): { pacer: DownlinkPacer; sent: Int16Array[] } {
  const sent: Int16Array[] = [];
  const pacer = new DownlinkPacer({ sampleRate: 16000, leadMs: 60_000, clock: new PacerClock(5), send: (frame) => sent.push(frame) });
  return { pacer, sent };
}

describe('DownlinkPacer frames', () => {
  it('sends frames as views of the audio it was handed, copying only a frame that straddles two chunks', () => {
    const { pacer, sent } = pacerSendingAtOnce();
    const first = Int16Array.from({ length: 800 }, (_, i) => i);
    const second = Int16Array.from({ length: 480 }, (_, i) => 800 + i);
    pacer.push(first);
    expect(sent).toHaveLength(2);
    expect(pacer.queuedMs).toBe(10);
    pacer.push(second);
    expect(sent).toHaveLength(4);
    expect(sent.map((f) => f.length)).toEqual([320, 320, 320, 320]);
    // Every sample in order, none lost or repeated across the chunk boundary.
    expect(sent.flatMap((f) => Array.from(f))).toEqual(Array.from({ length: 1280 }, (_, i) => i));
    expect(sent[0]!.buffer).toBe(first.buffer);
    expect(sent[1]!.buffer).toBe(first.buffer);
    expect(sent[2]!.buffer).not.toBe(first.buffer);
    expect(sent[2]!.buffer).not.toBe(second.buffer);
    expect(sent[3]!.buffer).toBe(second.buffer);
    expect(pacer.idle).toBe(true);
    pacer.close();
  });

  it('pads the last partial frame of a stream with silence on flush, and counts queued audio in ms', async () => {
    const { pacer, sent } = pacerSendingAtOnce();
    pacer.push(new Int16Array(400).fill(9));
    expect(sent).toHaveLength(1);
    expect(pacer.queuedMs).toBe(5);
    expect(pacer.idle).toBe(false);
    // A partial frame does not hold whenIdle: only whole frames are owed.
    await pacer.whenIdle();
    pacer.flush();
    expect(sent).toHaveLength(2);
    expect(Array.from(sent[1]!.subarray(0, 80))).toEqual(new Array(80).fill(9));
    expect(Array.from(sent[1]!.subarray(80))).toEqual(new Array(240).fill(0));
    expect(pacer.idle).toBe(true);
    // After a flush the next stream starts on a frame of its own.
    pacer.push(new Int16Array(320).fill(3));
    expect(sent).toHaveLength(3);
    expect(sent[2]![0]).toBe(3);
    pacer.close();
  });

  it('clear drops what is queued and reports it', () => {
    const sent: Int16Array[] = [];
    const clock = new PacerClock(5);
    const pacer = new DownlinkPacer({ sampleRate: 16000, leadMs: 0, clock, send: (frame) => sent.push(frame) });
    pacer.push(new Int16Array(16000));
    expect(sent.length).toBeLessThanOrEqual(1);
    expect(pacer.clear()).toBe(1000 - sent.length * 20);
    expect(pacer.queuedMs).toBe(0);
    expect(pacer.idle).toBe(true);
    expect(clock.running).toBe(false);
  });
});
