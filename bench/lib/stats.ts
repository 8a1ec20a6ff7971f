/** Nearest-rank percentile of an unsorted sample; `p` in 0..100. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new Error('percentile of an empty sample');
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

/** Rounds to `digits` decimals for the table. */
export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}
