import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { int16ToBytes } from '../../media/pcm.ts';

/**
 * The speech recognisers the voices benchmark compares, each behind one shape: transcribe a
 * 16 kHz clip, report the memory it took. Only engines that bring their English model through
 * npm or Debian qualify (nothing may be downloaded); README "Voice with no system packages"
 * lists the npm packages that were inspected and why the others cannot run here.
 */
export interface BenchRecogniser {
  readonly name: string;
  /** What it needs: "Debian packages …" or "npm only". */
  readonly needs: string;
  /** One-time CPU cost before the first transcript (model load), ms. */
  readonly loadMs: number;
  /** The transcript and the CPU time spent decoding it (model load excluded), ms. */
  transcribe(samples: Int16Array): Promise<{ text: string; decodeMs: number }>;
  /** Peak resident memory attributable to the recogniser, MB. */
  memoryMb(): number;
  close(): void;
}

const POCKETSPHINX = '/usr/bin/pocketsphinx_continuous';
const POCKETSPHINX_MODEL = '/usr/share/pocketsphinx/model/en-us';

/**
 * Debian's pocketsphinx (today's offline recogniser) run as the server runs it: one
 * `pocketsphinx_continuous -infile` per utterance, default en-us acoustic and language model.
 * Its model load is measured once on a short silence and reported apart, because the server
 * loads it ahead of need (warm processes); decode CPU time is the rest.
 */
export async function debianPocketsphinx(): Promise<BenchRecogniser | string> {
  if (!existsSync(POCKETSPHINX) || !existsSync(POCKETSPHINX_MODEL)) return 'not installed (apt-get install pocketsphinx pocketsphinx-en-us)';
  const dir = mkdtempSync(join(tmpdir(), 'parley-bench-ps-'));
  let clip = 0;
  let peakKb = 0;
  const run = async (samples: Int16Array): Promise<{ text: string; ms: number }> => {
    const file = join(dir, `clip-${(clip += 1)}.raw`);
    writeFileSync(file, int16ToBytes(samples));
    const child = spawn(POCKETSPHINX, ['-infile', file, '-logfn', '/dev/null'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    // VmHWM and the CPU counters only grow: the last reading before the process exits is its
    // peak memory and (to a 20 ms poll) its CPU time. CPU time, not wall time, so other load on
    // a shared machine does not count against the recogniser.
    let cpuMs = 0;
    const poll = setInterval(() => {
      const usage = processUsage(child.pid);
      if (!usage) return;
      peakKb = Math.max(peakKb, usage.highWaterKb);
      cpuMs = usage.cpuMs;
    }, 20);
    await new Promise((resolve) => child.once('close', resolve));
    clearInterval(poll);
    rmSync(file, { force: true });
    return { text: text.replace(/\s+/g, ' ').trim(), ms: cpuMs };
  };
  const load = await run(new Int16Array(1600));
  return {
    name: 'pocketsphinx 5prealpha (Debian)',
    needs: 'Debian packages pocketsphinx, pocketsphinx-en-us (37 MB model)',
    loadMs: load.ms,
    transcribe: async (samples) => {
      const result = await run(samples);
      return { text: result.text, decodeMs: Math.max(0, result.ms - load.ms) };
    },
    memoryMb: () => peakKb / 1024,
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Peak resident memory and CPU time (user + system) so far of a live process, from /proc. */
function processUsage(pid: number | undefined): { highWaterKb: number; cpuMs: number } | undefined {
  try {
    const status = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    // Fields after the command name: utime and stime are the 12th and 13th, in clock ticks (100/s).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return { highWaterKb: status ? Number(status[1]) : 0, cpuMs: (Number(stat[11]) + Number(stat[12])) * 10 };
  } catch {
    return undefined;
  }
}

interface SoundSwallowerDecoder {
  initialize(): Promise<void>;
  lookup_word(word: string): string | null;
  set_grammar(jsgf: string): void;
  start(): void;
  process_audio(pcm: Float32Array, noSearch: boolean, fullUtt: boolean): number;
  stop(): void;
  get_text(): string;
}

/**
 * SoundSwallower (npm `soundswallower`, a WebAssembly PocketSphinx that ships the same en-us
 * acoustic model and dictionary in its tarball). It decodes finite-state grammars only, no
 * n-gram language model, so open speech needs a word loop: here over the 2,942 words of the
 * Dale–Chall list of words familiar to American readers (npm `dale-chall`), a vocabulary chosen
 * without looking at the test sentences. Both packages are optional: `npm i --no-save
 * soundswallower@0.6.3 dale-chall@2.0.1` to include this row.
 */
export async function soundSwallower(): Promise<BenchRecogniser | string> {
  let base: string;
  try {
    base = dirname(fileURLToPath(import.meta.resolve('soundswallower')));
    await import('dale-chall' as string);
  } catch {
    return 'not installed (npm i --no-save soundswallower@0.6.3 dale-chall@2.0.1)';
  }
  const rssBefore = process.memoryUsage().rss;
  const started = process.cpuUsage();
  const createModule = (await import('soundswallower' as string)).default as (m: object) => Promise<{ Decoder: new (c: object) => SoundSwallowerDecoder }>;
  const { daleChall } = (await import('dale-chall' as string)) as { daleChall: string[] };
  const module = await createModule({ modelBase: `${join(base, 'model')}/` });
  const decoder = new module.Decoder({ loglevel: 'ERROR', samprate: 16000 });
  await decoder.initialize();
  const vocabulary = [...new Set(daleChall.map((w) => w.toLowerCase()))].filter((w) => /^[a-z']+$/.test(w) && decoder.lookup_word(w));
  decoder.set_grammar(`#JSGF V1.0;\ngrammar loop;\npublic <utterance> = <word>+;\n<word> = ${vocabulary.join(' | ')};\n`);
  const loadMs = cpuMs(process.cpuUsage(started));
  let peak = process.memoryUsage().rss;
  return {
    name: `soundswallower 0.6.3 (npm, WASM; ${vocabulary.length}-word loop)`,
    needs: 'npm only (soundswallower + dale-chall)',
    loadMs,
    transcribe: async (samples) => {
      const pcm = Float32Array.from(samples, (s) => s / 32768);
      const t0 = process.cpuUsage();
      decoder.start();
      decoder.process_audio(pcm, false, true);
      decoder.stop();
      const decodeMs = cpuMs(process.cpuUsage(t0));
      peak = Math.max(peak, process.memoryUsage().rss);
      return { text: decoder.get_text(), decodeMs };
    },
    memoryMb: () => (peak - rssBefore) / 1024 / 1024,
    close: () => undefined,
  };
}

function cpuMs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}
