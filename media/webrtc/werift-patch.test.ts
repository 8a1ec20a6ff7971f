import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getBit } from 'werift';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script run by npm's postinstall, no types
import { patchWerift } from './werift-patch.mjs';

/** werift's own getBit before the patch, verbatim. */
function originalGetBit(bits: number, startIndex: number, length = 1): number {
  let bin = bits.toString(2).split('');
  bin = [...Array<string>(8 - bin.length).fill('0'), ...bin];
  const s = bin.slice(startIndex, startIndex + length).join('');
  return Number.parseInt(s, 2);
}

const ORIGINAL_SOURCE = `var x = 1;
function getBit(bits, startIndex, length = 1) {
  let bin = bits.toString(2).split("");
  bin = [...Array(8 - bin.length).fill("0"), ...bin];
  const s = bin.slice(startIndex, startIndex + length).join("");
  const v = Number.parseInt(s, 2);
  return v;
}
function paddingByte(bits) {}
`;

describe('werift getBit patch (postinstall)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('is applied to the installed werift, and werift now parses with it', () => {
    expect(String(getBit)).not.toContain('split');
  });

  it('gives the original result for every byte, start and length', () => {
    let compared = 0;
    for (let byte = 0; byte < 256; byte += 1) {
      for (let start = 0; start < 8; start += 1) {
        for (let length = 1; start + length <= 8; length += 1) {
          expect(getBit(byte, start, length)).toBe(originalGetBit(byte, start, length));
          compared += 1;
        }
      }
    }
    expect(compared).toBe(256 * 36);
  });

  it('rewrites the original text once, is idempotent, and leaves unknown text alone', () => {
    const root = mkdtempSync(join(tmpdir(), 'werift-patch-'));
    dirs.push(root);
    mkdirSync(join(root, 'lib/common/src'), { recursive: true });
    mkdirSync(join(root, 'lib/nonstandard'), { recursive: true });
    writeFileSync(join(root, 'lib/index.mjs'), ORIGINAL_SOURCE);
    writeFileSync(join(root, 'lib/common/src/binary.js'), ORIGINAL_SOURCE.replace(/\n {2}/g, '\n    '));
    writeFileSync(join(root, 'lib/nonstandard/index.mjs'), 'function getBit(bits) { return something(bits); }\n');

    const first = patchWerift(root) as { patched: string[]; skipped: string[] };
    expect(first.patched).toEqual(['lib/index.mjs', 'lib/common/src/binary.js']);
    expect(first.skipped).toEqual(['lib/nonstandard/index.mjs: getBit is not the expected code (werift changed?)']);
    const patched = readFileSync(join(root, 'lib/index.mjs'), 'utf8');
    expect(patched).toContain('return bits >> 8 - startIndex - length & (1 << length) - 1;\n}\nfunction paddingByte');
    expect(patched).not.toContain('split');
    expect(readFileSync(join(root, 'lib/nonstandard/index.mjs'), 'utf8')).toBe('function getBit(bits) { return something(bits); }\n');

    const second = patchWerift(root) as { patched: string[]; skipped: string[] };
    expect(second.patched).toEqual([]);
    expect(readFileSync(join(root, 'lib/index.mjs'), 'utf8')).toBe(patched);
  });
});
