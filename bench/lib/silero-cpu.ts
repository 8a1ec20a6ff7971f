import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { VadFactory } from '../../media/vad.ts';

/** A tree's Silero factory: this checkout's, or a baseline commit's extracted tree. */
export interface SileroTree {
  label: string;
  dir?: string;
  /** Passed to the tree's createSileroFactory (e.g. `{ quietGate: true }`). */
  options?: Record<string, unknown>;
}

export interface SileroCpu {
  label: string;
  /** CPU of every thread of this process per session-second, above the idle feed loop (ms). */
  allMs: number;
  /** The same for the event-loop thread alone (ms). */
  mainMs: number;
  meanBatch: number;
  /** Share of windows the quiet gate decided without the network (0 for a tree without it). */
  quietShare: number;
  /** Speech/non-speech per decided frame, every session's in session order (for comparing trees). */
  decisions: string;
}

type Factory = VadFactory & { model: { windows: number; batches: number }; quietWindows?: number };

const FRAME = 320;

/** On-CPU time of this process's event-loop thread (ms): /proc schedstat counts nanoseconds. */
function mainThreadCpuMs(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

function allThreadsCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

async function load(tree: SileroTree): Promise<Factory> {
  const path = tree.dir ? pathToFileURL(join(tree.dir, 'media/silero-vad.ts')).href : new URL('../../media/silero-vad.ts', import.meta.url).href;
  const mod = (await import(path)) as { createSileroFactory(options?: Record<string, unknown>): Promise<Factory> };
  return mod.createSileroFactory(tree.options);
}

/**
 * Silero's own cost, apart from the server's: `sessions` detectors in this process, each handed
 * one 20 ms frame of `audio` every 20 ms (a quarter of them every 5 ms, as uplink frames arrive
 * spread out), for `seconds`; the CPU of an idle run of the same feed loop is subtracted. Trees
 * alternate (ABAB) so machine load falls on both alike. Each session starts at its own fixed
 * offset in `audio`, the same in every tree, so their decisions can be compared frame by frame.
 */
export async function sileroCpu(trees: SileroTree[], audio: Int16Array, sessions: number, seconds: number, rounds: number): Promise<SileroCpu[]> {
  const factories = await Promise.all(trees.map(load));
  const feed = async (factory: Factory | undefined, decisions: boolean[][]): Promise<{ all: number; main: number }> => {
    const detectors = Array.from({ length: sessions }, (_, s) => factory?.create((_frame, speech) => decisions[s]!.push(speech)));
    const frames = Math.floor(audio.length / FRAME);
    const all0 = allThreadsCpuMs();
    const main0 = mainThreadCpuMs();
    const start = performance.now();
    for (let tick = 0; performance.now() - start < seconds * 1000; tick += 1) {
      for (let s = tick % 4; s < sessions; s += 4) {
        const at = ((s * 97 + Math.floor(tick / 4)) % frames) * FRAME;
        detectors[s]?.push(audio.subarray(at, at + FRAME));
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    // The last windows' answers (on the Silero thread, too) belong to this run.
    await new Promise((r) => setTimeout(r, 150));
    const used = { all: allThreadsCpuMs() - all0, main: mainThreadCpuMs() - main0 };
    for (const d of detectors) d?.free();
    return used;
  };
  const results = trees.map((t) => ({ label: t.label, all: 0, main: 0, idleAll: 0, idleMain: 0, decisions: Array.from({ length: sessions }, (): boolean[] => []) }));
  const windows0 = factories.map((f) => ({ windows: f.model.windows, batches: f.model.batches, quiet: f.quietWindows ?? 0 }));
  for (let r = 0; r < rounds; r += 1) {
    for (const i of r % 2 === 0 ? trees.keys() : [...trees.keys()].reverse()) {
      const idle = await feed(undefined, []);
      const used = await feed(factories[i], r === 0 ? results[i]!.decisions : Array.from({ length: sessions }, () => []));
      Object.assign(results[i]!, { all: results[i]!.all + used.all - idle.all, main: results[i]!.main + used.main - idle.main });
    }
  }
  const perSessionS = (ms: number): number => ms / (rounds * sessions * seconds);
  return results.map((r, i) => ({
    label: r.label,
    allMs: perSessionS(r.all),
    mainMs: perSessionS(r.main),
    meanBatch: (factories[i]!.model.windows - windows0[i]!.windows) / Math.max(1, factories[i]!.model.batches - windows0[i]!.batches),
    quietShare: ((factories[i]!.quietWindows ?? 0) - windows0[i]!.quiet) / Math.max(1, (factories[i]!.quietWindows ?? 0) - windows0[i]!.quiet + factories[i]!.model.windows - windows0[i]!.windows),
    decisions: r.decisions.map((d) => d.map((x) => (x ? '1' : '0')).join('')).join('|'),
  }));
}

/** Frames decided differently by two trees, over the frames both decided; and how many those were. */
export function decisionDiff(a: string, b: string): { differing: number; compared: number } {
  const as = a.split('|');
  const bs = b.split('|');
  let differing = 0;
  let compared = 0;
  as.forEach((x, s) => {
    const y = bs[s] ?? '';
    const n = Math.min(x.length, y.length);
    for (let k = 0; k < n; k += 1) if (x[k] !== y[k]) differing += 1;
    compared += n;
  });
  return { differing, compared };
}
