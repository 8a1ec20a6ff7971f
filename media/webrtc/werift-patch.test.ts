import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getBit } from 'werift';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The one change Parley makes to a dependency: werift's getBit, through patch-package
 * (media/webrtc/patches/, applied by `npm install` / `npm ci` in this repository via `prepare`,
 * never in an install of the published package). These tests fail when the patch no longer
 * matches the werift that is installed, or was not applied.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PATCH_DIR = join(ROOT, 'media/webrtc/patches');
// The package root, from its CommonJS entry (lib/webrtc/src/index.js); werift does not export package.json.
const WERIFT = join(dirname(createRequire(import.meta.url).resolve('werift')), '../../..');
const FILES = ['lib/index.mjs', 'lib/nonstandard/index.mjs', 'lib/common/src/binary.js'];
const REINSTALL = 'reinstall werift so `prepare` patches it: rm -rf node_modules/werift && npm install';

/** werift's own getBit before the patch, verbatim. */
function originalGetBit(bits: number, startIndex: number, length = 1): number {
  let bin = bits.toString(2).split('');
  bin = [...Array<string>(8 - bin.length).fill('0'), ...bin];
  const s = bin.slice(startIndex, startIndex + length).join('');
  return Number.parseInt(s, 2);
}

const scratch = mkdtempSync(join(tmpdir(), 'werift-patch-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `git apply` on copies of werift's three builds; throws with git's message when it does not apply. */
function gitApply(args: string[], patch: string, dir: string): void {
  execFileSync('git', ['apply', ...args, patch], { cwd: dir, stdio: 'pipe' });
}

describe('the werift patch (patch-package)', () => {
  const patches = readdirSync(PATCH_DIR).filter((f) => f.endsWith('.patch'));
  const installed = (JSON.parse(readFileSync(join(WERIFT, 'package.json'), 'utf8')) as { version: string }).version;
  const pinned = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies.werift;

  it('is applied by every install from this repository, production ones included', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; dependencies: Record<string, string> };
    // npm runs `prepare` for `npm install` and `npm ci` here, --omit=dev too (deploy/systemd), never
    // for a package installed as a dependency: patch-package must be there without devDependencies.
    // First in prepare, before the build that npm pack needs.
    expect(pkg.scripts.prepare).toMatch(/^patch-package --patch-dir media\/webrtc\/patches --error-on-fail( && |$)/);
    expect(pkg.scripts.postinstall).toBeUndefined();
    expect(Object.keys(pkg.dependencies)).toContain('patch-package');
  });

  it('is for the werift version package.json pins exactly, which is the one installed', () => {
    expect(patches).toEqual([`werift+${pinned}.patch`]);
    expect(installed, `installed werift ${installed}, pinned ${pinned}: ${REINSTALL}`).toBe(pinned);
  });

  it('was applied to the installed werift, and turns back into the pristine release and forth again', () => {
    const patch = join(PATCH_DIR, patches[0]!);
    const copy = join(scratch, 'node_modules/werift');
    for (const file of FILES) cpSync(join(WERIFT, file), join(copy, file));
    // Applied: the patch reverses cleanly on what is installed...
    expect(() => gitApply(['--check', '-R'], patch, scratch), REINSTALL).not.toThrow();
    gitApply(['-R'], patch, scratch);
    expect(readFileSync(join(copy, 'lib/index.mjs'), 'utf8')).toContain('bits.toString(2).split("")');
    // ...and applies cleanly on the pristine text it gave back.
    expect(() => gitApply(['--check'], patch, scratch)).not.toThrow();
    expect(String(getBit)).toContain('parley patch');
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
});
