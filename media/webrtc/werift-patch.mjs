// Run by `npm install` (postinstall). werift parses every RTP header bit field with
//   getBit(byte, start, length): byte.toString(2).split("") → pad with an array → slice → join → parseInt
// six times per header and several header parses per packet. Profiling a 50-call benchmark put
// that one function at ~13% of the server's allocations (strings and arrays per packet, which
// become GC pauses, which become downlink jitter) and ~3% of its CPU. This rewrites it as the
// shift-and-mask it stands for, in werift's three builds (ESM, nonstandard ESM, CommonJS).
// Same results for every byte, start and length (media/webrtc/werift-patch.test.ts checks all
// of them against the original). Idempotent; if werift's text ever changes, it says so and
// leaves werift as it is: the server works either way, only slower.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FAST = 'return bits >> 8 - startIndex - length & (1 << length) - 1;';
// The body of the original, whatever the indentation: from the toString(2) to the return.
const SLOW = /(function getBit\(bits, startIndex, length = 1\) \{)\s*let bin = bits\.toString\(2\)\.split\(""\);\s*bin = \[\.\.\.Array\(8 - bin\.length\)\.fill\("0"\), \.\.\.bin\];\s*const s = bin\.slice\(startIndex, startIndex \+ length\)\.join\(""\);\s*const v = Number\.parseInt\(s, 2\);\s*return v;/;

function weriftRoot() {
  try {
    // lib/index.mjs → the package root.
    return dirname(dirname(fileURLToPath(import.meta.resolve('werift'))));
  } catch {
    return undefined;
  }
}

export function patchWerift(root = weriftRoot()) {
  if (!root) return { patched: [], skipped: ['werift is not installed'] };
  const patched = [];
  const skipped = [];
  for (const rel of ['lib/index.mjs', 'lib/nonstandard/index.mjs', 'lib/common/src/binary.js']) {
    const file = join(root, rel);
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    if (text.includes(FAST)) continue;
    if (!SLOW.test(text)) {
      skipped.push(`${rel}: getBit is not the expected code (werift changed?)`);
      continue;
    }
    writeFileSync(file, text.replace(SLOW, `$1\n  ${FAST}`));
    patched.push(rel);
  }
  return { patched, skipped };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { patched, skipped } = patchWerift();
  if (patched.length > 0) console.log(`parley: werift getBit made allocation-free in ${patched.join(', ')}`);
  for (const s of skipped) console.warn(`parley: werift patch skipped: ${s}`);
}
