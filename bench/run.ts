import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { progress } from './lib/stats.ts';
import type { Benchmark, Row } from './types.ts';

/**
 * `npm run bench [-- filter...]`: runs every benchmark module listed below (or those whose name
 * contains one of the filters, or is `name` for a filter `=name`), prints one markdown table to stdout and writes the same table to
 * bench/results.md. Progress goes to stderr. Benchmarks report figures; nothing here passes or
 * fails on a figure, only on a benchmark that could not run.
 *
 * To add a benchmark: a module under bench/ exporting `name` and `run(): Promise<Row[]>`, added
 * to this list.
 */
const BENCHMARKS: Array<() => Promise<Benchmark>> = [
  () => import('./text-latency.ts'),
  () => import('./text-adapter.ts'),
  () => import('./voice.ts'),
  () => import('./asr-settings.ts'),
  () => import('./voice-footprint.ts'),
  () => import('./webrtc.ts'),
  () => import('./aiortc-connect.ts'),
  () => import('./opus-decode.ts'),
  () => import('./resume.ts'),
  () => import('./interactions.ts'),
  () => import('./turn-taking.ts'),
  () => import('./silero-gate.ts'),
  () => import('./voices.ts'),
  () => import('./metering.ts'),
  () => import('./observability.ts'),
  () => import('./fuzz.ts'),
  () => import('./scale.ts'),
];

const RESULTS = fileURLToPath(new URL('./results.md', import.meta.url));

/** The figures issue 19 set goals for: the summary at the top of the output. */
const SUMMARY: Array<{ goal: string; benchmark: string; metric: string; target: string }> = [
  { goal: 'adapter path CPU per text turn / local path, 1 session', benchmark: 'text-adapter', metric: 'adapter path: server CPU per text turn, 1 session', target: '≤ 2× local' },
  { goal: 'adapter path CPU ratio to local, 1000 sessions', benchmark: 'text-adapter', metric: 'adapter path: CPU ratio to local, 1000 sessions', target: '≤ 2' },
  { goal: 'adapter path server-added latency p50, 1 session', benchmark: 'text-adapter', metric: 'adapter path: server-added latency p50, 1 session', target: '< 1 ms' },
  { goal: 'adapter path server-added latency p99, 1000 sessions', benchmark: 'text-adapter', metric: 'adapter path: server-added latency p99, 1000 sessions', target: '< 10 ms' },
  { goal: 'adapter path turns/s at saturation', benchmark: 'text-adapter', metric: 'adapter path: turns/s at saturation', target: 'report' },
  { goal: 'local providers end of speech → first audio p50', benchmark: 'voice', metric: 'local providers: end of speech → first audio byte p50', target: '< 250 ms' },
  { goal: 'local providers end of speech → first audio p50, flow mode', benchmark: 'voice', metric: 'local providers, flow mode: end of speech → first audio byte p50', target: '< 250 ms' },
  { goal: 'local providers talking sessions per core (counted on one CPU)', benchmark: 'voice', metric: 'local providers: talking sessions per core', target: '≥ 12' },
  { goal: 'WebSocket voice sessions, one process, jitter p99 < 20 ms', benchmark: 'voice', metric: 'concurrent voice sessions with jitter p99 < 20 ms, one process', target: '≥ 300' },
  { goal: 'WebRTC first call on a fresh server: offer → connected p50', benchmark: 'webrtc', metric: 'first call on a fresh server: offer → connected p50, warm workers', target: 'no worker start in it' },
  { goal: 'WebRTC offer → connected p50 (aiortc peer)', benchmark: 'aiortc-connect', metric: 'aiortc → server: offer → connected p50, this tree', target: '< 300 ms' },
  { goal: 'uplink Opus decode per 20 ms frame p50', benchmark: 'opus-decode', metric: 'Opus decode to 16 kHz PCM16 per 20 ms frame p50, libopus-wasm: @evan/opus WASM (Int16 out; now)', target: 'faster than opus-decoder' },
  { goal: 'WebRTC calls per core, jitter p99 < 10 ms', benchmark: 'webrtc', metric: 'one core: concurrent WebRTC calls with jitter p99 < 10 ms', target: '≥ 60' },
];

async function main(): Promise<number> {
  const filters = process.argv.slice(2).map((f) => f.toLowerCase());
  const all = await Promise.all(BENCHMARKS.map((load) => load()));
  // `=name` selects that benchmark alone (`voice` also matches voice-footprint and voices).
  const matches = (b: Benchmark, f: string): boolean => (f.startsWith('=') ? b.name.toLowerCase() === f.slice(1) : b.name.toLowerCase().includes(f));
  const selected = all.filter((b) => filters.length === 0 || filters.some((f) => matches(b, f)));
  if (selected.length === 0) {
    process.stderr.write(`no benchmark matches ${filters.join(', ')}; available: ${all.map((b) => b.name).join(', ')}\n`);
    return 2;
  }

  const rows: Row[] = [];
  const failures: string[] = [];
  const started = Date.now();
  for (const bench of selected) {
    progress(`running ${bench.name}`);
    const t0 = Date.now();
    try {
      rows.push(...(await bench.run()));
      progress(`${bench.name} finished in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    } catch (error) {
      const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
      failures.push(`${bench.name}: ${detail}`);
      rows.push({ benchmark: bench.name, metric: 'FAILED', value: '-', unit: '', note: oneLine(error instanceof Error ? error.message : String(error)) });
      progress(`${bench.name} FAILED: ${detail}`);
    }
  }

  const cpu = cpus();
  const header = [
    '# Benchmark results',
    '',
    `Generated by \`npm run bench${filters.length ? ` -- ${filters.join(' ')}` : ''}\` on ${new Date().toISOString()}, ` +
      `Node ${process.version}, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${process.platform}; ` +
      `load average ${loadavg()[0]?.toFixed(2)} at the end; ${((Date.now() - started) / 1000).toFixed(0)} s. Figures, not pass/fail: targets are in the notes.`,
    '',
  ].join('\n');
  const previous = previousValues();
  const table = `${formatSummary(rows, previous)}\n\n${formatTable(rows, previous)}`;
  process.stdout.write(`${table}\n`);
  writeFileSync(RESULTS, `${header}\n${table}\n`);
  progress(`wrote ${RESULTS}`);
  for (const f of failures) process.stderr.write(`\n${f}\n`);
  return failures.length > 0 ? 1 : 0;
}

/**
 * One table; `previous` (benchmark + metric → value, from the last results.md) fills the
 * "previous" column so a run reads against the one before it.
 */
export function formatTable(rows: readonly Row[], previous: ReadonlyMap<string, string> = new Map()): string {
  const cell = (v: string | number): string => String(v).replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const lines = ['| benchmark | metric | value | previous | unit | note |', '|---|---|---:|---:|---|---|'];
  for (const r of rows) {
    const before = previous.get(`${cell(r.benchmark)}|${cell(r.metric)}`) ?? '–';
    lines.push(`| ${cell(r.benchmark)} | ${cell(r.metric)} | ${cell(r.value)} | ${before} | ${cell(r.unit)} | ${cell(r.note)} |`);
  }
  return lines.join('\n');
}

/** The issue-19 goals: this run's figure, the previous run's, the target. Rows not run show –. */
export function formatSummary(rows: readonly Row[], previous: ReadonlyMap<string, string>): string {
  const lines = ['| goal | value | previous | unit | target |', '|---|---:|---:|---|---|'];
  for (const s of SUMMARY) {
    const row = rows.find((r) => r.benchmark === s.benchmark && r.metric === s.metric);
    lines.push(`| ${s.goal} | ${row?.value ?? '–'} | ${previous.get(`${s.benchmark}|${s.metric}`) ?? '–'} | ${row?.unit ?? ''} | ${s.target} |`);
  }
  return lines.join('\n');
}

/** Values of the last recorded run (bench/results.md), keyed by benchmark and metric. */
export function previousValues(file = RESULTS): Map<string, string> {
  const values = new Map<string, string>();
  if (!existsSync(file)) return values;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    // Rows of either layout: | benchmark | metric | value | (previous |) unit | note |
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
    if (cells.length < 5 || cells[0] === 'benchmark' || cells[0]?.startsWith('---')) continue;
    values.set(`${cells[0]}|${cells[1]}`, cells[2] ?? '–');
  }
  return values;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').slice(0, 300);
}

// An interrupted run still takes its child servers down (see lib/child-server.ts exit hook).
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
