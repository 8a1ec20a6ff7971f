import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.ts';

function parse(pieces: (string | Buffer)[], end = true): string[] {
  const parser = new SseParser();
  const out: string[] = [];
  for (const piece of pieces) parser.push(typeof piece === 'string' ? Buffer.from(piece) : piece, out);
  if (end) parser.end(out);
  return out;
}

/** Every way to cut the bytes of `text` in two, plus one byte per read. */
function everySplit(text: string): Buffer[][] {
  const bytes = Buffer.from(text);
  const splits: Buffer[][] = [[...bytes].map((b) => Buffer.from([b]))];
  for (let i = 0; i <= bytes.length; i += 1) splits.push([bytes.subarray(0, i), bytes.subarray(i)]);
  return splits;
}

/** Every way to cut it in three (boundaries anywhere, two per stream). */
function everyThreeWaySplit(text: string): Buffer[][] {
  const bytes = Buffer.from(text);
  const splits: Buffer[][] = [];
  for (let i = 0; i <= bytes.length; i += 1) for (let j = i; j <= bytes.length; j += 1) splits.push([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]);
  return splits;
}

describe('SseParser', () => {
  const stream = ': keep-alive\n\ndata: {"a":1}\n\ndata:{"b":2}\r\n\r\nevent: x\nid: 7\nretry: 10\ndata: one\ndata: two\n\ndata: [DONE]\n\n';
  const expected = ['{"a":1}', '{"b":2}', 'one\ntwo', '[DONE]'];

  it('hands out each event once, whatever the read boundaries (LF and CRLF)', () => {
    for (const pieces of everySplit(stream)) expect(parse(pieces)).toEqual(expected);
    for (const pieces of everyThreeWaySplit(stream)) expect(parse(pieces)).toEqual(expected);
  });

  it('reads the OpenAI wire format with CRLF line ends split anywhere', () => {
    const chunk = (content: string): string => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\r\n\r\n`;
    const wire = `${chunk('Hel')}: OPENROUTER PROCESSING\r\n\r\n${chunk('lo')}data: [DONE]\r\n\r\n`;
    for (const pieces of everySplit(wire)) {
      const out = parse(pieces);
      expect(out.map((d) => (d === '[DONE]' ? d : (JSON.parse(d) as { choices: { delta: { content: string } }[] }).choices[0]?.delta.content))).toEqual(['Hel', 'lo', '[DONE]']);
    }
  });

  it('joins multi-line data across CRLF line ends, wherever a read splits the CR from its LF', () => {
    const crlf = 'data: one\r\ndata: two\r\n\r\ndata: three\r\n\r\n';
    for (const pieces of everySplit(crlf)) expect(parse(pieces)).toEqual(['one\ntwo', 'three']);
  });

  it('treats a lone CR as a line end, also when the CR ends one read and LF starts the next', () => {
    const cr = 'data: a\r\rdata: b\r\n\r\n';
    for (const pieces of everySplit(cr)) expect(parse(pieces)).toEqual(['a', 'b']);
    expect(parse(['data: a\r', '\n', '\r\n'])).toEqual(['a']);
    expect(parse(['data: a\r', '\r', 'data: b\n\n'])).toEqual(['a', 'b']);
  });

  it('strips exactly one space after the colon; a bare `data` line is an empty line of data', () => {
    expect(parse(['data:  two spaces\n\ndata\ndata:x\n\n'])).toEqual([' two spaces', '\nx']);
    expect(parse(['data:\n\ndata: \n\n'])).toEqual(['', '']);
  });

  it('ignores comments, other fields (also ones whose name starts with "data") and a blank line alone', () => {
    expect(parse([': c\n\nevent: e\n\n\n\nid: 1\n\ndatabase: x\n\ndat: y\n\n'])).toEqual([]);
  });

  it('dispatches an unterminated final event at end(), but not before', () => {
    expect(parse(['data: last'], false)).toEqual([]);
    expect(parse(['data: last'])).toEqual(['last']);
    expect(parse(['data: last\r'])).toEqual(['last']);
    expect(parse(['data: la', 'st'])).toEqual(['last']);
  });

  it('keeps multi-byte text whole when a read ends inside a character, and JSON with colons and escaped newlines', () => {
    const json = JSON.stringify({ content: 'héllo: wörld\n🙂 日本' });
    for (const pieces of everySplit(`data: ${json}\n\n`)) expect(parse(pieces)).toEqual([json]);
  });

  it('does not keep a view of a read buffer the caller reuses', () => {
    const parser = new SseParser();
    const out: string[] = [];
    const reused = Buffer.from('data: abc');
    parser.push(reused, out);
    reused.fill(0x78);
    parser.push(Buffer.from('\n\n'), out);
    expect(out).toEqual(['abc']);
  });
});
