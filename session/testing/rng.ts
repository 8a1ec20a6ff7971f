/**
 * A seeded pseudo-random source (mulberry32): a fuzz run or a randomized episode is reproduced
 * exactly from its seed, which every failure report prints.
 */
export class Rng {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from nothing');
    return items[this.int(items.length)]!;
  }

  /** A child source for one part of a run, so parts stay reproducible on their own. */
  fork(): Rng {
    return new Rng(this.int(2 ** 32));
  }
}
