import type { Floor } from './floor.ts';
import { newTurnId } from './ids.ts';
import type { ServerFrame } from './protocol/server.ts';

export interface EndOfCallHooks {
  send(frame: ServerFrame): void;
  close(code: number, reason: string): void;
  log: { info(obj: object, msg: string): void };
  /** The sign-off is a reply like any other: it waits for the floor. */
  floor: Pick<Floor, 'start' | 'afterCurrent'>;
}

/**
 * The two clean endings. end_call: after the farewell turn, `session_end_requested`, then close
 * after a grace period unless the user speaks. Wrap-up: the current reply finishes, a sign-off
 * is spoken, then close 1000 "idle".
 */
export class EndOfCall {
  private graceTimer: NodeJS.Timeout | undefined;
  private wrapping = false;

  constructor(
    private readonly hooks: EndOfCallHooks,
    private readonly graceMs: number,
    private readonly signOff: string,
  ) {}

  get wrappingUp(): boolean {
    return this.wrapping;
  }

  agentEnded(farewell: string): void {
    this.hooks.send({ type: 'session_end_requested', farewell });
    clearTimeout(this.graceTimer);
    this.graceTimer = setTimeout(() => {
      this.graceTimer = undefined;
      this.hooks.log.info({}, 'call ended by the agent');
      this.hooks.close(1000, 'end_call');
    }, this.graceMs);
  }

  /** Real user speech during the grace period cancels the end. */
  userSpoke(): void {
    if (!this.graceTimer) return;
    clearTimeout(this.graceTimer);
    this.graceTimer = undefined;
    this.hooks.log.info({}, 'end of call cancelled: the user spoke');
  }

  /** wrap_up: the reply in flight is allowed to finish, then the sign-off, then close 1000 "idle". */
  wrapUp(): void {
    if (this.wrapping) return;
    this.wrapping = true;
    this.hooks.floor.afterCurrent(() => {
      const runner = this.hooks.floor.start({ turnId: newTurnId(), fixedText: this.signOff });
      void runner.done.then(() => this.hooks.close(1000, 'idle'));
    });
  }

  close(): void {
    clearTimeout(this.graceTimer);
  }
}
