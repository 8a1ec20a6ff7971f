import { sharedPacerClock } from '../../media/pacer-clock.ts';
import type { MediaWorkerPool } from '../../media/webrtc/worker-peer.ts';
import type { GcPauseSummary } from './gc-pauses.ts';
import { LatenessHistogram, type LatenessSummary } from './lateness-histogram.ts';

/**
 * Downlink pacing figures, always on (fixed memory, O(1) per frame): the send lateness of every
 * frame paced on the main thread's clock (the session pacers; with media workers, their handoff)
 * and, from each media worker, its RTP send lateness and its GC pauses. media/ only offers the
 * hook (PacerClock.onLateness); the benchmarks read these figures (and /metrics will).
 */

/** What each media worker reports (worker-instrumentation.ts runs in the worker). */
export type WorkerPacingReport = LatenessSummary & { gc: GcPauseSummary };

/** The module every media worker loads to report its pacing. */
export const WORKER_INSTRUMENTATION = new URL('./worker-instrumentation.ts', import.meta.url);

const main = new LatenessHistogram();

/** Hooks the main thread's pacer clock (idempotent). */
export function instrumentPacing(): void {
  sharedPacerClock.onLateness = (ms) => main.record(ms);
}

/** The main thread's pacing lateness since the last reset. */
export function mainPacingLateness(reset: boolean): LatenessSummary {
  const summary = main.summary();
  if (reset) main.reset();
  return summary;
}

/** Every running media worker's report since its last reset. */
export async function workerPacingReports(pools: MediaWorkerPool[], reset: boolean): Promise<WorkerPacingReport[]> {
  return (await Promise.all(pools.map((pool) => pool.reports(reset)))).flat() as WorkerPacingReport[];
}
