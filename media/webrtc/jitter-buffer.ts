/**
 * A small reordering buffer for uplink RTP. Packets are released in sequence order; a gap that
 * newer packets have waited behind for `depth` packets is given up on and filled with a
 * silence frame, so the endpointer keeps seeing 20 ms steps and never stalls on a lost packet.
 */
export type Released = { kind: 'packet'; payload: Uint8Array } | { kind: 'lost' };

export class JitterBuffer {
  private next: number | undefined;
  private readonly held = new Map<number, Uint8Array>();

  constructor(private readonly depth = 3) {}

  push(sequence: number, payload: Uint8Array): Released[] {
    const out: Released[] = [];
    if (this.next === undefined) this.next = sequence;
    // Late duplicates or packets already given up on are dropped.
    if (seqDistance(this.next, sequence) < 0) return out;
    this.held.set(sequence, payload);
    for (;;) {
      const ready = this.held.get(this.next);
      if (ready) {
        this.held.delete(this.next);
        out.push({ kind: 'packet', payload: ready });
        this.next = (this.next + 1) & 0xffff;
        continue;
      }
      if (this.held.size >= this.depth) {
        out.push({ kind: 'lost' });
        this.next = (this.next + 1) & 0xffff;
        continue;
      }
      return out;
    }
  }
}

/** Signed distance from a to b in 16-bit sequence space. */
function seqDistance(a: number, b: number): number {
  const d = (b - a) & 0xffff;
  return d >= 0x8000 ? d - 0x10000 : d;
}
