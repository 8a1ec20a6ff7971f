import { ClosingSchedule } from '../closing/closing-schedule.ts';
import { SessionDeadlines } from '../closing/session-deadlines.ts';
import { errorFrame, WS_ERRORS } from '../protocol/errors.ts';
import type { ServerFrame } from '../protocol/server.ts';
import type { SessionDeps } from '../session-deps.ts';
import { CreditWatch } from './credit-watch.ts';
import { UsageMeter } from './usage-meter.ts';

export interface AccountingHooks {
  send(frame: ServerFrame): void;
  /** Characters handed to speech synthesis so far. */
  synthesizedChars(): number;
  wrapUp(): void;
  wrappingUp(): boolean;
}

/** Closing notices go this long ahead unless the host says otherwise (CLOSING_NOTICE_S). */
const DEFAULT_NOTICE_MS = 60_000;

/**
 * What a session uses and what it may still use: its meters, the closes planned for it
 * (announced with session_closing_soon), its own deadlines (idle, max duration) and, for an
 * account with a balance, the credit watch.
 */
export class SessionAccounting {
  readonly meter: UsageMeter;
  readonly closing: ClosingSchedule;
  private readonly deadlines: SessionDeadlines;
  private readonly credit: CreditWatch | undefined;
  /** Uplink audio seconds per byte (PCM16 at audio.sr) and per sample (the pipeline's input rate). */
  private readonly secondsPerByte: number;
  private readonly secondsPerSample: number;

  constructor(deps: Pick<SessionDeps, 'usage' | 'closing' | 'credit' | 'transport' | 'log' | 'media'>, uplinkRate: number | undefined, hooks: AccountingHooks) {
    this.secondsPerByte = 1 / (2 * (uplinkRate ?? 16_000));
    this.secondsPerSample = 1 / (deps.media?.inputRate ?? uplinkRate ?? 16_000);
    this.meter = new UsageMeter(deps.usage?.prices ?? {}, deps.usage?.sink, hooks.synthesizedChars);
    this.closing = new ClosingSchedule({ send: hooks.send, log: deps.log }, deps.closing?.noticeMs ?? DEFAULT_NOTICE_MS);
    this.deadlines = new SessionDeadlines(this.closing, deps.closing ?? {}, {
      wrapUp: hooks.wrapUp,
      wrappingUp: hooks.wrappingUp,
      close: (code, reason) => deps.transport.close(code, reason),
    });
    this.credit =
      deps.credit &&
      new CreditWatch(this.meter, this.closing, deps.credit, {
        send: hooks.send,
        log: deps.log,
        exhausted: () => {
          hooks.send(errorFrame('credit_exhausted', 'the account has no credit left; the conversation can be resumed once it is topped up'));
          deps.transport.close(WS_ERRORS.credit_exhausted.close, 'credit_exhausted');
        },
      });
  }

  /** Uplink audio from the wire (PCM16 at audio.sr). */
  uplinkBytes(bytes: number): void {
    this.meter.audioIn(bytes * this.secondsPerByte);
  }

  /** Uplink audio already decoded at the pipeline's input rate (WebRTC). */
  uplinkSamples(samples: number): void {
    this.meter.audioIn(samples * this.secondsPerSample);
  }

  /** The session began; `openedAt` (epoch ms) is the conversation's first start. */
  begin(openedAt: number): void {
    this.deadlines.begin(openedAt);
    this.credit?.check();
  }

  /** Real user input: the idle wait starts again. */
  userActive(): void {
    this.deadlines.activity();
  }

  /** A reply ended (its usage is on its way to the ledger). */
  turnEnded(): void {
    this.deadlines.activity();
    this.credit?.check();
  }

  /** The session is over: the last interval goes to the ledger, nothing planned runs. */
  close(): void {
    this.meter.end();
    this.closing.close();
    this.credit?.stop();
  }
}
