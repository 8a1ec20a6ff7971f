/**
 * Where each spoken piece sits on the turn's audio timeline, so "the listener heard N ms" can be
 * turned back into the text they heard.
 */
interface Piece {
  text: string;
  startMs: number;
  durationMs: number;
}

export class SpokenTimeline {
  private readonly pieces: Piece[] = [];
  private totalMs = 0;

  add(text: string, durationMs: number): void {
    this.pieces.push({ text, startMs: this.totalMs, durationMs });
    this.totalMs += durationMs;
  }

  /** A streamed piece's audio arrived in several chunks: lengthen the last piece. */
  extendLast(durationMs: number): void {
    const last = this.pieces[this.pieces.length - 1];
    if (!last) return;
    last.durationMs += durationMs;
    this.totalMs += durationMs;
  }

  get durationMs(): number {
    return this.totalMs;
  }

  /** Text heard after `heardMs` of playback: whole pieces, then the heard share of the next, cut at a word. */
  textAt(heardMs: number): string {
    const parts: string[] = [];
    for (const piece of this.pieces) {
      const end = piece.startMs + piece.durationMs;
      if (end <= heardMs) {
        parts.push(piece.text);
        continue;
      }
      const share = (heardMs - piece.startMs) / piece.durationMs;
      if (share > 0) {
        const chars = Math.floor(piece.text.length * share);
        const cut = piece.text.lastIndexOf(' ', chars);
        if (cut > 0) parts.push(piece.text.slice(0, cut));
      }
      break;
    }
    return parts.join(' ');
  }
}
