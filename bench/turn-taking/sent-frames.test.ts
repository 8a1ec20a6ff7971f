import { describe, expect, it } from 'vitest';
import { streamTimeAt } from './sent-frames.ts';

describe('streamTimeAt', () => {
  // Frames sent 1000, 1020, 1041 (a late timer), 1060.
  const sent = [1000, 1020, 1041, 1060];

  it('puts a moment at a send on the end of the frame just sent', () => {
    expect(streamTimeAt(sent, 1000)).toBe(20);
    expect(streamTimeAt(sent, 1041)).toBe(60);
  });

  it('counts from the last frame sent, so a late send moves nothing after it', () => {
    expect(streamTimeAt(sent, 1035)).toBe(55);
    expect(streamTimeAt(sent, 1050)).toBe(69);
  });

  it('runs on past the last frame and before the first', () => {
    expect(streamTimeAt(sent, 1200)).toBe(220);
    expect(streamTimeAt(sent, 990)).toBe(10);
  });

  it('needs a frame', () => {
    expect(() => streamTimeAt([], 5)).toThrow('no frame');
  });
});
