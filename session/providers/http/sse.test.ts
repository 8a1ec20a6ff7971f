import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.ts';

function parse(pieces: string[], end = true): string[] {
  const parser = new SseParser();
  const out: string[] = [];
  for (const piece of pieces) parser.push(piece, out);
  if (end) parser.end(out);
  return out;
}

/** Every way to cut `text` in two, plus one character per read. */
function everySplit(text: string): string[][] {
  const splits: string[][] = [[...text]];
  for (let i = 0; i <= text.length; i += 1) splits.push([text.slice(0, i), text.slice(i)]);
  return splits;
}

describe('SseParser', () => {
  const stream = ': keep-alive\n\ndata: {"a":1}\n\ndata:{"b":2}\r\n\r\nevent: x\nid: 7\nretry: 10\ndata: one\ndata: two\n\ndata: [DONE]\n\n';
  const expected = ['{"a":1}', '{"b":2}', 'one\ntwo', '[DONE]'];

  it('hands out each event once, whatever the read boundaries (LF and CRLF)', () => {
    for (const pieces of everySplit(stream)) expect(parse(pieces)).toEqual(expected);
  });

  it('treats a lone CR as a line end, also when the CR ends one read and LF starts the next', () => {
    const cr = 'data: a\r\rdata: b\r\n\r\n';
    for (const pieces of everySplit(cr)) expect(parse(pieces)).toEqual(['a', 'b']);
  });

  it('strips exactly one space after the colon; a bare `data` line is an empty line of data', () => {
    expect(parse(['data:  two spaces\n\ndata\ndata:x\n\n'])).toEqual([' two spaces', '\nx']);
  });

  it('ignores comments, other fields and lines without data; a blank line alone dispatches nothing', () => {
    expect(parse([': c\n\nevent: e\n\n\n\nid: 1\n\n'])).toEqual([]);
  });

  it('dispatches an unterminated final event at end(), but not before', () => {
    expect(parse(['data: last'], false)).toEqual([]);
    expect(parse(['data: last'])).toEqual(['last']);
    expect(parse(['data: last\r'])).toEqual(['last']);
  });

  it('keeps multi-byte text and JSON with colons and escaped newlines intact', () => {
    const json = JSON.stringify({ content: 'héllo: wörld\n🙂' });
    expect(parse([`data: ${json}\n\n`])).toEqual([json]);
  });
});
