import { runFrameFuzz } from '../signaling/testing/fuzz/frame-fuzz.ts';
import { runProviderFaults } from '../signaling/testing/fuzz/provider-faults.ts';
import { Rng } from '../session/testing/rng.ts';
import { randomScenario, runSignalScenario, type SignalResult } from '../signaling/testing/fuzz/signals.ts';
import { progress } from './lib/stats.ts';
import type { Row } from './types.ts';

export const name = 'fuzz';

/**
 * The fuzz and fault suite at full size (`npm test` runs it bounded, signaling/e2e/fuzz-*):
 * FUZZ_FRAMES mutated and valid frames (default 100,000) from 8 text and 2 voice clients with
 * canaries beside them; FUZZ_FAULT_ROUNDS rounds of every LLM, ASR and TTS fault; FUZZ_SIGNALS
 * signal scenarios at random moments. FUZZ_SEED reproduces a run (printed in every row).
 */
export async function run(): Promise<Row[]> {
  const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
  const frames = Number(process.env.FUZZ_FRAMES ?? 100_000);
  const rounds = Number(process.env.FUZZ_FAULT_ROUNDS ?? 4);
  const signals = Number(process.env.FUZZ_SIGNALS ?? 12);
  const rng = new Rng(seed);
  const row = (metric: string, value: number | string, unit: string, note: string): Row => ({ benchmark: name, metric, value, unit, note: `${note}; seed ${seed}` });

  progress(`fuzz: ${frames} frames (seed ${seed})`);
  const textClients = 8;
  const voiceClients = 2;
  const f = await runFrameFuzz({ seed: rng.int(2 ** 31), textClients, voiceClients, framesPerClient: Math.ceil(frames / (textClients + voiceClients)), requests: Math.ceil(frames / 50) });
  const top = [...f.errorCodes].sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code} ${n}`).join(', ');
  const rows: Row[] = [
    row('frames sent (mutated, valid, audio)', f.framesSent, 'frames', `${textClients} text + ${voiceClients} voice clients, every frame type through every mutation then random; ${f.sockets} sockets, ${f.resumes} resumes; ${(f.ms / 1000).toFixed(0)} s`),
    row('odd upgrade and HTTP requests', f.requestsSent, 'requests', 'bad targets (not URLs), headers, versions, keys, origins'),
    row('crashes', f.crashes, '', `target 0${f.crashDetail ? `: ${f.crashDetail.slice(0, 300)}` : ''}`),
    row('internal errors (caught bugs)', f.internalErrors, '', 'target 0: internal_error frames'),
    row('hung turns', f.hungTurns, '', 'target 0: a turn without done while its socket stayed open'),
    row('sessions harmed beside the fuzzed ones', f.sessionsHarmed, 'of 3', `target 0: 2 text + 1 voice canary, ${f.canaryTurns} turns${f.harmDetail.length ? `: ${f.harmDetail.slice(0, 3).join(' | ')}` : ''}`),
    row('fuzzed sessions answering at the end', `${f.fuzzedAliveAtEnd}/${f.fuzzedSessions}`, '', 'a plain turn after the fuzz'),
    row('error frames by code', f.errorCodes.size, 'codes', top),
    row('drain after the run', f.drainExit ?? 'n/a', 'exit code', 'SIGTERM at the end'),
  ];

  progress(`fuzz: ${rounds} rounds of provider faults`);
  const p = await runProviderFaults(rng.fork(), rounds);
  rows.push(
    row('provider fault turns (LLM, ASR, TTS)', p.turns, 'turns', `${p.byFault.size} kinds: 500, 429, bad SSE, stalls at each point, slow bytes, early EOF, bad JSON`),
    row('provider faults: crashes / hung turns', `${p.crashes} / ${p.hungTurns.length}`, '', `target 0 / 0${p.hungTurns.length ? `: ${p.hungTurns.slice(0, 5).join(', ')}` : ''}`),
    row('provider faults: wrong outcomes / leaks', `${p.wrongOutcomes.length} / ${p.leaks.length}`, '', `target 0 / 0${[...p.wrongOutcomes, ...p.leaks].slice(0, 3).join(' | ')}`),
    row('provider faults: sessions harmed beside', p.sessionsHarmed, 'of 2', `target 0${p.harmDetail.length ? `: ${p.harmDetail.slice(0, 3).join(' | ')}` : ''}`),
  );

  progress(`fuzz: ${signals} signal scenarios`);
  const results: SignalResult[] = [];
  for (let i = 0; i < signals; i += 1) results.push(await runSignalScenario(randomScenario(rng, ['server', 'start-command', 'start-command-group'])));
  const failed = results.filter((r) => r.problems.length > 0);
  rows.push(
    row('signal scenarios drained cleanly', `${signals - failed.length}/${signals}`, '', `SIGTERM/SIGINT, once or twice, to the server, to the start command, to its process group${failed.length ? `; failed: ${failed.slice(0, 3).map((r) => `${r.scenario.signal} to ${r.scenario.target}: ${r.problems.join('; ')}`).join(' | ')}` : ''}`),
    row('sessions drained by signals', `${results.reduce((n, r) => n + r.drained, 0)}/${results.reduce((n, r) => n + r.sessions, 0)}`, '', 'server_restarting + close 1012'),
  );
  return rows;
}
