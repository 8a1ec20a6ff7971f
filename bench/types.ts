/** One figure in the results table. Benchmarks report figures; they never pass or fail. */
export interface Row {
  benchmark: string;
  metric: string;
  value: number | string;
  unit: string;
  /** Target (if any), load shape and method caveats. */
  note: string;
}

/** A module under bench/ listed in bench/run.ts. */
export interface Benchmark {
  /** Matched (substring, case-insensitive) by `npm run bench -- <filter>`. */
  name: string;
  run(): Promise<Row[]>;
}
