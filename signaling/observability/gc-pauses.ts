import { PerformanceObserver } from 'node:perf_hooks';

export interface GcPauseSummary {
  count: number;
  totalMs: number;
  maxMs: number;
}

/**
 * Garbage-collection pauses of the calling thread since the last reset: what makes a pacer late
 * when the event loop is otherwise idle. For diagnostics and the benchmarks; always on is cheap.
 */
export class GcPauses {
  private count = 0;
  private totalMs = 0;
  private maxMs = 0;

  /** `onPause`: told after each batch of pauses is counted (tests wait on it). */
  constructor(private readonly onPause?: () => void) {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        this.count += 1;
        this.totalMs += entry.duration;
        if (entry.duration > this.maxMs) this.maxMs = entry.duration;
      }
      this.onPause?.();
    }).observe({ entryTypes: ['gc'] });
  }

  summary(): GcPauseSummary {
    return { count: this.count, totalMs: Math.round(this.totalMs), maxMs: Math.round(this.maxMs * 10) / 10 };
  }

  reset(): void {
    this.count = 0;
    this.totalMs = 0;
    this.maxMs = 0;
  }
}
