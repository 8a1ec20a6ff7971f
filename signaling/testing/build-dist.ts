import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './server-process.ts';

/**
 * Brings dist/ up to date, as installing a clone (`npm ci`, its `prepare`) leaves it, for tests
 * that run the compiled server the way the docs and the deploy recipe do. Builds in one checkout
 * take turns and write only what changed, so tests running side by side may each call this.
 */
export function buildDist(): void {
  execFileSync(process.execPath, [join(REPO_ROOT, '.ci/build.mjs')], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
}
