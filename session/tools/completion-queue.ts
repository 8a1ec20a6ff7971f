import type { ServerFrame } from '../protocol/server.ts';
import type { TurnStatus } from '../turn-contract.ts';

export interface Completion {
  jobIds: string[];
  /** What the assistant should tell the user. */
  instruction: string;
  attempts: number;
}

export interface CompletionHooks {
  /** True when no reply is active and the user is not speaking. */
  floorFree(): boolean;
  /** Starts a narration reply; `beforeDone` runs inside that turn, before its done. */
  narrate(instruction: string, beforeDone: (status: TurnStatus, delivered: string) => void): void;
  send(frame: ServerFrame): void;
}

/** Spoken delivery gets one retry; after that the result stays in context, unspoken. */
const MAX_ATTEMPTS = 2;

/**
 * Background-job voiceovers waiting for the floor. They are spoken only when the floor is free,
 * never over the user; a voiceover cut off before anything was heard is requeued once, then
 * reported as failed in `tool_job_delivery_failed` inside the turn that failed.
 */
export class CompletionQueue {
  private readonly items: Completion[] = [];
  private delivering = false;

  constructor(private readonly hooks: CompletionHooks) {}

  push(jobIds: string[], instruction: string): void {
    this.items.push({ jobIds, instruction, attempts: 0 });
    this.pump();
  }

  get size(): number {
    return this.items.length;
  }

  /** Called whenever the floor may have become free. */
  pump(): void {
    if (this.delivering || this.items.length === 0 || !this.hooks.floorFree()) return;
    // Several finished jobs are told in one reply.
    const batch = this.items.splice(0);
    this.delivering = true;
    const instruction = batch.map((b) => b.instruction).join('\n');
    this.hooks.narrate(instruction, (status, delivered) => {
      this.delivering = false;
      if (status !== 'interrupted' && status !== 'error') return;
      if (delivered.length > 0 && status === 'interrupted') return;
      const requeued: Completion[] = [];
      const failed: Completion[] = [];
      for (const item of batch) (item.attempts + 1 < MAX_ATTEMPTS ? requeued : failed).push({ ...item, attempts: item.attempts + 1 });
      this.items.unshift(...requeued);
      this.hooks.send({
        type: 'tool_job_delivery_failed',
        job_ids: failed.flatMap((f) => f.jobIds),
        requeued: requeued.flatMap((r) => r.jobIds),
        detail: 'the spoken update was cut off before it was heard',
      });
    });
  }

  clear(): void {
    this.items.length = 0;
  }
}
