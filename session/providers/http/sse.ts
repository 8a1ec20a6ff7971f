/**
 * Incremental server-sent-events decoder that hands out each event's data (the WHATWG rules:
 * `data` lines joined with `\n`, dispatched on a blank line; `\n`, `\r\n` and lone `\r` line
 * ends; `:` comments; other fields ignored). Events may be split anywhere across reads.
 *
 * Built for the per-token hot path of a streaming model: it scans with indexOf and slices each
 * data line once, allocating no array per read (events go to the caller's `out`).
 */
export class SseParser {
  /** An unterminated line carried over to the next read. */
  private pending = '';
  /** The current event's data so far; undefined when it has no data line yet. */
  private data: string | undefined;
  /** The last read ended in `\r`: a `\n` opening the next read belongs to it. */
  private skipLf = false;

  /** Appends the data of every event completed by `text` to `out`. */
  push(text: string, out: string[]): void {
    if (text.length === 0) return;
    let start = 0;
    if (this.skipLf) {
      this.skipLf = false;
      if (text.charCodeAt(0) === 10) start = 1;
    }
    const buf = this.pending.length > 0 ? this.pending + text.slice(start) : text;
    if (this.pending.length > 0) start = 0;
    this.pending = '';
    const hasCr = buf.indexOf('\r', start) >= 0;
    for (;;) {
      let end = buf.indexOf('\n', start);
      let next = end + 1;
      if (hasCr) {
        const cr = buf.indexOf('\r', start);
        if (cr >= 0 && (end < 0 || cr < end)) {
          end = cr;
          if (cr + 1 === buf.length) {
            this.skipLf = true;
            next = cr + 1;
          } else {
            next = buf.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
          }
        }
      }
      if (end < 0) break;
      this.line(buf, start, end, out);
      start = next;
    }
    if (start < buf.length) this.pending = buf.slice(start);
  }

  /** The stream ended: an event the server did not close with a blank line still counts. */
  end(out: string[]): void {
    if (this.pending.length > 0) this.line(this.pending, 0, this.pending.length, out);
    this.pending = '';
    this.line('', 0, 0, out);
  }

  private line(buf: string, start: number, end: number, out: string[]): void {
    if (start === end) {
      if (this.data !== undefined) out.push(this.data);
      this.data = undefined;
      return;
    }
    // The common case first: `data: ` with its one optional space.
    let value: string;
    if (buf.startsWith('data:', start)) {
      const from = buf.charCodeAt(start + 5) === 32 ? start + 6 : start + 5;
      value = buf.slice(from, end);
    } else if (end - start === 4 && buf.startsWith('data', start)) {
      value = '';
    } else {
      return; // a comment, another field (event, id, retry) or a line without a colon
    }
    this.data = this.data === undefined ? value : `${this.data}\n${value}`;
  }
}
