import type { NarrationState, ServerFrameOf } from './types.ts';
import { libraryError } from './errors.ts';

interface Waiter {
  jobId: string;
  states: ReadonlySet<string>;
  resolve(state: NarrationState): void;
}

/**
 * The latest tool_job_narration state per job id and per interaction id, and promises waiting
 * for a job to reach one of some states. Interaction state does not survive a resume (SPEC), so
 * the client clears this tracker when a resumed session becomes ready.
 */
export class NarrationTracker {
  private readonly jobs = new Map<string, NarrationState>();
  private readonly interactions = new Map<string, NarrationState>();
  private waiters: Waiter[] = [];

  onFrame(frame: ServerFrameOf<'tool_job_narration'>): void {
    frame.job_ids.forEach((jobId, i) => {
      this.jobs.set(jobId, frame.state);
      const interactionId = frame.interaction_ids[i];
      if (interactionId !== undefined) this.interactions.set(interactionId, frame.state);
    });
    // Interaction ids beyond the aligned job ids (coalesced deliveries) still get the state.
    for (const interactionId of frame.interaction_ids.slice(frame.job_ids.length)) this.interactions.set(interactionId, frame.state);
    const ready = this.waiters.filter((w) => this.jobs.has(w.jobId) && w.states.has(this.jobs.get(w.jobId)!));
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve(this.jobs.get(w.jobId)!);
  }

  jobState(jobId: string): NarrationState | null {
    return this.jobs.get(jobId) ?? null;
  }

  interactionState(interactionId: string): NarrationState | null {
    return this.interactions.get(interactionId) ?? null;
  }

  /** Resolves with the state once job `jobId` is in one of `states` (at once if it already is). */
  waitFor(jobId: string, states: NarrationState | readonly NarrationState[], timeoutMs: number): Promise<NarrationState> {
    const wanted = new Set<string>(typeof states === 'string' ? [states] : states);
    const now = this.jobs.get(jobId);
    if (now !== undefined && wanted.has(now)) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        jobId,
        states: wanted,
        resolve: (state) => {
          clearTimeout(timer);
          resolve(state);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        const last = this.jobs.get(jobId) ?? 'none';
        reject(libraryError('narration_timeout', `job ${jobId} did not reach ${[...wanted].join('|')} within ${timeoutMs} ms (last state: ${last})`, true));
      }, Math.max(0, timeoutMs));
      this.waiters.push(waiter);
    });
  }

  /** Forgets every state (reset, resume); waiters keep waiting for fresh frames. */
  clear(): void {
    this.jobs.clear();
    this.interactions.clear();
  }
}
