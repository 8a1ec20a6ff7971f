import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** A commit's tree to run beside this one (BENCH_BASELINE=<git ref>). */
export interface Baseline {
  ref: string;
  sha: string;
  /** Root of the extracted tree; its node_modules is this checkout's. */
  dir: string;
  /** BENCH_BASELINE_ENV: variables for the baseline's server only. */
  env: Record<string, string>;
}

/**
 * BENCH_BASELINE=<git ref> (a commit, tag or branch of this repository): benchmarks that support
 * it also start that commit's server and measure both side by side in the same run, so a change
 * is judged against what it replaced under the same machine load. The tree is extracted with
 * `git archive` into the temp directory once per commit (no worktree, nothing checked out) and
 * runs on this checkout's node_modules. BENCH_BASELINE_ENV="NAME=value …" sets variables for the
 * baseline's server only: e.g. `WS_NO_BUFFER_UTIL=1` keeps ws off the native bufferutil that
 * this checkout's node_modules would otherwise give the baseline too.
 */
export function baseline(): Baseline | undefined {
  const ref = process.env.BENCH_BASELINE;
  if (!ref) return undefined;
  const sha = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: REPO, encoding: 'utf8' }).trim();
  const dir = join(tmpdir(), `parley-baseline-${sha.slice(0, 12)}`);
  if (!existsSync(join(dir, 'package.json'))) {
    const partial = `${dir}.${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    execFileSync('sh', ['-c', 'git archive "$1" | tar -x -C "$2"', 'sh', sha, partial], { cwd: REPO });
    symlinkSync(join(REPO, 'node_modules'), join(partial, 'node_modules'));
    rmSync(dir, { recursive: true, force: true });
    renameSync(partial, dir);
  }
  // The extracted tree outlives the checkout that made it (another worktree, since removed):
  // its node_modules must be this checkout's.
  const modules = join(dir, 'node_modules');
  if (linkTarget(modules) !== join(REPO, 'node_modules')) {
    rmSync(modules, { force: true });
    symlinkSync(join(REPO, 'node_modules'), modules);
  }
  const env = Object.fromEntries((process.env.BENCH_BASELINE_ENV ?? '').split(/\s+/).filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
  return { ref, sha, dir, env };
}

function linkTarget(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}
