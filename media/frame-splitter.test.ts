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

  it('hands out copies, and reset() drops a partial frame', () => {
    const frames: Int16Array[] = [];
    const splitter = new FrameSplitter(2, (frame) => frames.push(frame));
    splitter.push(Int16Array.of(1, 2, 3));
    splitter.reset();
    splitter.push(Int16Array.of(4, 5));
    expect(frames.map((f) => [...f])).toEqual([[1, 2], [4, 5]]);
    expect(frames[0]!.buffer).not.toBe(frames[1]!.buffer);
  });
});
