/**
 * Incremental server-sent-events decoder over raw body bytes that hands out each event's data
 * (the WHATWG rules: `data` lines joined with `\n`, dispatched on a blank line; `\n`, `\r\n` and
 * lone `\r` line ends; `:` comments; other fields ignored). Events may be split anywhere across
 * reads, a multi-byte character included.
 *
 * Built for the per-token hot path of a streaming model: it scans the bytes with indexOf and
 * decodes each data line once. Line ends are ASCII bytes that never occur inside a UTF-8
 * sequence, so lines are cut on bytes and decoded whole; no StringDecoder, no array per read.
 */
const LF = 10;
const CR = 13;
const SPACE = 32;
const EMPTY = Buffer.alloc(0);

export class SseParser {
  /** An unterminated line carried over to the next read (a copy: undici reuses its read buffers). */
  private pending: Buffer = EMPTY;
  /** The current event's data so far; undefined when it has no data line yet. */
  private data: string | undefined;
  /** The last read ended in `\r`: a `\n` opening the next read belongs to it. */
  private skipLf = false;

  /** Appends the data of every event completed by `chunk` to `out`. */
  push(chunk: Buffer, out: string[]): void {
    let buf = chunk;
    let start = 0;
    if (this.skipLf) {
      this.skipLf = false;
      if (buf.length > 0 && buf[0] === LF) start = 1;
    }
    if (this.pending.length > 0) {
      buf = Buffer.concat([this.pending, start === 0 ? buf : buf.subarray(start)]);
      start = 0;
      this.pending = EMPTY;
    }
    const length = buf.length;
    // Most streams end lines with LF alone: look for CR once, and only mind it when present.
    let cr = buf.indexOf(CR, start);
    while (start < length) {
      let end = buf.indexOf(LF, start);
      let next = end + 1;
      if (cr >= 0 && cr < start) cr = buf.indexOf(CR, start);
      if (cr >= 0 && (end < 0 || cr < end)) {
        end = cr;
        if (cr + 1 === length) {
          this.skipLf = true;
          next = length;
        } else {
          next = buf[cr + 1] === LF ? cr + 2 : cr + 1;
        }
      }
      if (end < 0) break;
      this.line(buf, start, end, out);
      start = next;
    }
    if (start < length) this.pending = Buffer.from(buf.subarray(start));
  }

  /** The stream ended: an event the server did not close with a blank line still counts. */
  end(out: string[]): void {
    if (this.pending.length > 0) this.line(this.pending, 0, this.pending.length, out);
    this.pending = EMPTY;
    this.line(EMPTY, 0, 0, out);
  }

  private line(buf: Buffer, start: number, end: number, out: string[]): void {
    if (start === end) {
      if (this.data !== undefined) out.push(this.data);
      this.data = undefined;
      return;
    }
    // The common case first: `data:` with its one optional space.
    if (end - start < 4 || buf[start] !== 0x64 || buf[start + 1] !== 0x61 || buf[start + 2] !== 0x74 || buf[start + 3] !== 0x61) return;
    let value: string;
    if (end - start === 4) {
      value = '';
    } else if (buf[start + 4] === 0x3a) {
      const from = buf[start + 5] === SPACE ? start + 6 : start + 5;
      value = from >= end ? '' : buf.toString('utf8', from, end);
    } else {
      return; // a field whose name only starts with "data", e.g. `database: x`
    }
    this.data = this.data === undefined ? value : `${this.data}\n${value}`;
  }
}
