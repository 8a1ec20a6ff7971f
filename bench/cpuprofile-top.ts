import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/**
 * `npx tsx bench/cpuprofile-top.ts <file.cpuprofile> [count]`: the hottest functions of a V8 CPU
 * profile (as written by BENCH_CPU_PROF=<dir> npm run bench), by self time and by inclusive
 * time. Not a benchmark; a helper for reading why a figure is what it is.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, countArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: npx tsx bench/cpuprofile-top.ts <file.cpuprofile> [count]\n');
  process.exit(2);
}
const count = Number(countArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const label = (n: ProfileNode): string => {
  const { functionName, url, lineNumber } = n.callFrame;
  const where = url ? `${relative(process.cwd(), url.replace(/^file:\/\//, ''))}:${lineNumber + 1}` : '';
  return `${functionName || '(anonymous)'} ${where}`.trim();
};

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  total += dt;
  const node = byId.get(id);
  if (!node) return;
  self.set(label(node), (self.get(label(node)) ?? 0) + dt);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur) as ProfileNode);
    if (seen.has(l)) continue;
    seen.add(l);
    inclusive.set(l, (inclusive.get(l) ?? 0) + dt);
  }
});

const print = (title: string, m: Map<string, number>): void => {
  process.stdout.write(`\n${title} (total ${(total / 1000).toFixed(0)} ms sampled)\n`);
  for (const [l, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, count)) {
    process.stdout.write(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${l}\n`);
  }
};
print('self time', self);
print('inclusive time', inclusive);
