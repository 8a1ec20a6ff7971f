/**
 * Splits streamed reply text into speakable pieces so synthesis starts before the reply is
 * written: a piece ends at a sentence end, or at a clause break once it is long enough.
 */
export class SentenceSplitter {
  private buffer = '';

  constructor(
    private readonly clauseMinChars = 60,
    private readonly hardMaxChars = 220,
  ) {}

  push(delta: string): string[] {
    this.buffer += delta;
    const out: string[] = [];
    for (;;) {
      const cut = this.findCut();
      if (cut < 0) break;
      const piece = this.buffer.slice(0, cut).trim();
      this.buffer = this.buffer.slice(cut);
      if (piece) out.push(piece);
    }
    return out;
  }

  /** Whatever is left at the end of the reply. */
  flush(): string[] {
    const rest = this.buffer.trim();
    this.buffer = '';
    return rest ? [rest] : [];
  }

  private findCut(): number {
    const sentence = /[.!?…]+["')\]]*\s/.exec(this.buffer);
    if (sentence) return sentence.index + sentence[0].length;
    if (this.buffer.length >= this.clauseMinChars) {
      const clause = /[,;:—–]\s/g;
      let last = -1;
      for (let m = clause.exec(this.buffer); m; m = clause.exec(this.buffer)) {
        if (m.index + m[0].length >= this.clauseMinChars / 2) last = m.index + m[0].length;
      }
      if (last > 0) return last;
    }
    if (this.buffer.length >= this.hardMaxChars) {
      const space = this.buffer.lastIndexOf(' ', this.hardMaxChars);
      return space > 0 ? space + 1 : this.hardMaxChars;
    }
    return -1;
  }
}
