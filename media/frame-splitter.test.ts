import { describe, expect, it } from 'vitest';
import { FrameSplitter } from './frame-splitter.ts';

describe('FrameSplitter', () => {
  it('cuts any chunking into whole frames in order, keeping a partial frame for the next push', () => {
    const frames: number[][] = [];
    const splitter = new FrameSplitter(4, (frame) => frames.push([...frame]));
    splitter.push(Int16Array.of(1, 2, 3));
    expect(frames).toEqual([]);
    splitter.push(Int16Array.of(4, 5, 6, 7, 8, 9, 10));
    expect(frames).toEqual([[1, 2, 3, 4], [5, 6, 7, 8]]);
    splitter.push(Int16Array.of(11, 12));
    expect(frames).toEqual([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]);
  });

  it('passes whole frames on as views, copies only a frame cut across pushes; reset() drops a partial frame', () => {
    const frames: Int16Array[] = [];
    const splitter = new FrameSplitter(2, (frame) => frames.push(frame));
    const whole = Int16Array.of(1, 2, 3);
    splitter.push(whole);
    expect(frames[0]!.buffer).toBe(whole.buffer);
    splitter.reset();
    splitter.push(Int16Array.of(4));
    const rest = Int16Array.of(5, 6);
    splitter.push(rest);
    expect(frames.map((f) => [...f])).toEqual([[1, 2], [4, 5]]);
    expect(frames[1]!.buffer).not.toBe(rest.buffer);
    expect(frames[1]!.buffer).not.toBe(whole.buffer);
  });

  it('hands a push of exactly one frame on as the same array', () => {
    const frames: Int16Array[] = [];
    const splitter = new FrameSplitter(2, (frame) => frames.push(frame));
    const one = Int16Array.of(7, 8);
    splitter.push(one);
    expect(frames).toEqual([one]);
    expect(frames[0]).toBe(one);
  });
});
