import type { ServerFrame } from '../../protocol/server.ts';
import type { TurnStatus } from '../../turn-contract.ts';
import type { Ask, CloseState, NarrationState } from './interaction.ts';

/** A narration turn in flight, as the queue can act on it. */
export interface NarrationTurn {
  /** Stops the turn now (interrupted, done); its beforeDone still runs. */
  stop(): void;
}

export interface NarrationHost {
  /** No reply is active, the user is not speaking and the session is not ending. */
  floorFree(): boolean;
  /**
   * The reply in flight is blocked waiting on this call: end it now (done), so the call's ask is
   * voiced at once. Resolves when that turn's results are recorded; undefined when no turn yielded.
   */
  yieldFor(callId: string): Promise<void> | undefined;
  /** Starts a narration reply; `beforeDone` runs inside it, before its done. */
  narrate(instruction: string, beforeDone: (status: TurnStatus, delivered: string) => void): NarrationTurn;
  send(frame: ServerFrame): void;
  /** A context note for the model. */
  note(text: string): void;
  log: { warn(obj: object, msg: string): void };
}

export interface NarrationTiming {
  /** INTERACTION_QUEUE_DEADLINE_S in ms: the watchdog period. */
  deadlineMs: number;
  /** INTERACTION_QUEUE_DEADLINE_ROUNDS: watchdog rounds per delivery cycle, and spoken attempts per ask. */
  rounds: number;
}

interface Batch {
  asks: Ask[];
  turn: NarrationTurn | undefined;
  /** A real user turn or barge took the floor from this narration. */
  cutByUser: boolean;
  /** Stopped because one of its asks was closed: the others' unheard attempt is not charged. */
  stoppedForClose: boolean;
}

/**
 * The interaction narration queue (SPEC "Interaction narration states"). An ask is voiced at
 * once when the floor is free (or when its own blocked turn yields), otherwise it waits, ahead
 * of job voiceovers, with a watchdog retrying every deadline. Pending asks are coalesced into
 * one narration turn. Every delivery cycle ends in a reported state: started, superseded (a real
 * user turn or barge before anything was heard), queued again (claimed but unheard for another
 * reason), failed (past its bound; nothing spoken), or the state of a close.
 */
export class NarrationQueue {
  private queued: Ask[] = [];
  private speaking: Batch | undefined;
  /** Asks whose own turn just yielded: voiced as soon as that turn's results are recorded. */
  private reserved: Ask[] = [];
  private disposed = false;

  constructor(
    private readonly host: NarrationHost,
    private readonly timing: NarrationTiming,
  ) {}

  /** Something is waiting for, or holding, the floor: job voiceovers wait behind it. */
  get busy(): boolean {
    return this.queued.length > 0 || this.speaking !== undefined || this.reserved.length > 0;
  }

  /** A new ask: voiced now if its own blocked turn yields or the floor is free, else queued. */
  submit(ask: Ask): void {
    const yielded = this.host.yieldFor(ask.callId);
    if (yielded) return this.reserve([ask], yielded);
    if (this.reserved.length === 0 && !this.speaking && this.host.floorFree()) {
      this.claim([...this.takeQueued(), ask]);
      return;
    }
    this.enqueue([ask]);
  }

  /** The floor may be free: deliver everything queued in one narration turn. */
  pump(): void {
    if (this.speaking || this.reserved.length > 0 || this.queued.length === 0) return;
    if (!this.host.floorFree()) {
      // A queued ask whose own turn is the one blocking the floor makes it yield.
      for (const ask of this.queued) {
        const yielded = this.host.yieldFor(ask.callId);
        if (yielded) return this.reserve(this.takeQueued(), yielded);
      }
      return;
    }
    this.claim(this.takeQueued());
  }

  /** A real user turn or barge: nothing of the waiting asks was heard, so they are superseded. */
  userTookFloor(): void {
    const dropped = [...this.takeQueued(), ...this.reserved.splice(0)];
    if (dropped.length > 0) this.report('superseded', dropped);
    if (this.speaking) this.speaking.cutByUser = true;
  }

  /** The ask's decision closed: its narration ends in that state, and stops if it is being spoken. */
  close(ask: Ask, state: CloseState): void {
    if (this.reserved.includes(ask)) {
      this.reserved = this.reserved.filter((a) => a !== ask);
      this.report(state, [ask]);
      return;
    }
    if (ask.narration === 'queued') {
      this.queued = this.queued.filter((a) => a !== ask);
      this.stopWatchdog(ask);
      this.report(state, [ask]);
      return;
    }
    if (ask.narration !== 'started') return;
    this.report(state, [ask]);
    const batch = this.speaking;
    if (batch?.asks.includes(ask)) {
      batch.asks = batch.asks.filter((a) => a !== ask);
      batch.stoppedForClose = true;
      batch.turn?.stop();
    }
  }

  /** Reset: every narration not yet ended is superseded; nothing more is spoken. */
  supersedeAll(asks: readonly Ask[]): void {
    const live = asks.filter((a) => a.narration === 'queued' || a.narration === 'started' || this.reserved.includes(a));
    this.queued = [];
    this.reserved = [];
    for (const a of live) this.stopWatchdog(a);
    const batch = this.speaking;
    this.speaking = undefined;
    if (live.length > 0) this.report('superseded', live);
    batch?.turn?.stop();
  }

  /** The session is gone: stop every watchdog, report nothing. */
  dispose(): void {
    this.disposed = true;
    for (const a of this.queued) this.stopWatchdog(a);
    this.queued = [];
    this.reserved = [];
    this.speaking = undefined;
  }

  /** The floor is held for these asks until their yielded turn's results are recorded. */
  private reserve(asks: Ask[], yielded: Promise<void>): void {
    this.reserved.push(...asks);
    if (this.reserved.length > asks.length) return;
    void yielded.then(() => {
      const ready = this.reserved.splice(0);
      if (ready.length === 0 || this.disposed) return;
      if (!this.speaking && this.host.floorFree()) this.claim([...this.takeQueued(), ...ready]);
      else this.enqueue(ready);
    });
  }

  private claim(asks: Ask[]): void {
    const batch: Batch = { asks, turn: undefined, cutByUser: false, stoppedForClose: false };
    this.speaking = batch;
    for (const a of asks) a.attempts += 1;
    this.report('started', asks);
    batch.turn = this.host.narrate(instructionFor(asks), (status, delivered) => this.ended(batch, status, delivered));
  }

  private ended(batch: Batch, _status: TurnStatus, delivered: string): void {
    if (this.speaking === batch) this.speaking = undefined;
    const live = batch.asks.filter((a) => a.narration === 'started');
    if (live.length === 0) return;
    if (delivered.length > 0) {
      for (const a of live) a.voiced = true;
      return;
    }
    if (batch.cutByUser) {
      this.report('superseded', live);
      return;
    }
    if (batch.stoppedForClose) for (const a of live) a.attempts -= 1;
    const failed = live.filter((a) => a.attempts >= this.timing.rounds);
    const again = live.filter((a) => a.attempts < this.timing.rounds);
    if (failed.length > 0) this.fail(failed, 'its spoken delivery was retried past its bound');
    if (again.length > 0) this.enqueue(again);
  }

  private enqueue(asks: Ask[]): void {
    if (this.disposed) return;
    for (const ask of asks) {
      ask.rounds = 0;
      this.queued.push(ask);
      ask.watchdog = setInterval(() => this.watch(ask), this.timing.deadlineMs);
    }
    this.report('queued', asks);
  }

  /** One watchdog round: retry delivery; past the bound, the ask fails with nothing spoken. */
  private watch(ask: Ask): void {
    if (ask.narration !== 'queued') return this.stopWatchdog(ask);
    this.pump();
    if (ask.narration !== 'queued') return;
    ask.rounds += 1;
    if (ask.rounds < this.timing.rounds) return;
    this.queued = this.queued.filter((a) => a !== ask);
    this.fail([ask], 'the queue deadline expired with the floor unclaimable');
  }

  private fail(asks: Ask[], why: string): void {
    for (const a of asks) this.stopWatchdog(a);
    this.report('failed', asks);
    this.host.log.warn({ interaction_ids: asks.map((a) => a.id), why }, 'interaction narration failed');
    for (const a of asks) this.host.note(`The question of interaction ${a.id} could not be put to the user (${why}); the application handles it. Do not ask it unless it is raised again.`);
  }

  private takeQueued(): Ask[] {
    const taken = this.queued;
    this.queued = [];
    for (const a of taken) this.stopWatchdog(a);
    return taken;
  }

  private stopWatchdog(ask: Ask): void {
    clearInterval(ask.watchdog);
    ask.watchdog = undefined;
  }

  private report(state: NarrationState, asks: readonly Ask[]): void {
    for (const a of asks) a.narration = state;
    this.host.send({ type: 'tool_job_narration', state, job_ids: asks.map((a) => a.jobId), interaction_ids: asks.map((a) => a.id), kind: 'interaction' });
  }
}

/** The one-off instruction of a narration turn: put the question(s) to the user now. */
export function instructionFor(asks: readonly Ask[]): string {
  const one = (a: Ask): string => `"${a.prompt}"${a.options ? ` (options: ${a.options.join('; ')})` : ' (the user answers in their own words)'} [interaction ${a.id}]`;
  if (asks.length === 1) return `${INSTRUCTION_MARK} Ask it now, briefly and in your own words, then wait for the answer: ${one(asks[0]!)}`;
  return `${INSTRUCTION_MARK} Ask these now, briefly, one after the other, then wait for the answers: ${asks.map((a, i) => `${i + 1}) ${one(a)}`).join(' ')}`;
}

/** How a narration instruction begins; the offline model recognises it (providers/local-tools.ts). */
export const INSTRUCTION_MARK = 'A tool needs a decision from the user.';
