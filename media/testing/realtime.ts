/**
 * A real-time source for tests (a microphone, an RTP sender): calls `send(n)` for n = 0, 1, ...
 * at start + n·frameMs on the clock, the first at once, and resolves after the last one (or when
 * `stop()` says so). Drift-free: each frame is scheduled from the start, not from the previous
 * one. On vitest's fake clock it costs no real time.
 */
export function paced(frames: number, frameMs: number, send: (n: number) => void, stop: () => boolean = () => false): Promise<void> {
  const start = performance.now();
  return new Promise((resolve) => {
    const step = (n: number): void => {
      if (n >= frames || stop()) return resolve();
      send(n);
      if (n + 1 >= frames) return resolve();
      setTimeout(() => step(n + 1), Math.max(0, start + (n + 1) * frameMs - performance.now()));
    };
    step(0);
  });
}
