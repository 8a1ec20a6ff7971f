import type { PacerClock } from '../../media/pacer-clock.ts';
import type { WorkerInstrumentation } from '../../media/webrtc/media-worker-protocol.ts';
import { GcPauses } from './gc-pauses.ts';
import { LatenessHistogram } from './lateness-histogram.ts';
import type { WorkerPacingReport } from './pacing.ts';

/**
 * Loaded by every media worker thread (MediaWorkerPool's instrumentation): the thread's RTP send
 * lateness on its own pacer clock and its garbage-collection pauses, reported on request.
 */
export const install: WorkerInstrumentation['install'] = (clock: PacerClock) => {
  const lateness = new LatenessHistogram();
  const gc = new GcPauses();
  clock.onLateness = (ms) => lateness.record(ms);
  return (reset): WorkerPacingReport => {
    const report = { ...lateness.summary(), gc: gc.summary() };
    if (reset) {
      lateness.reset();
      gc.reset();
    }
    return report;
  };
};
