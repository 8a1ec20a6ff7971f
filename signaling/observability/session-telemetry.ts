import type { SessionObserver, TurnScope, TurnSummary } from '../../session/observer.ts';
import type { ToolOutcome } from '../../session/tools/types.ts';
import type { TurnStage } from '../../session/protocol/turn-metrics.ts';
import type { Logger } from '../log.ts';
import type { FineHistogram } from './fine-histogram.ts';
import { closeCodeLabel, errorCodeLabel } from './metrics.ts';
import type { Observability } from './observability.ts';
import type { TraceSpan } from './tracing.ts';

export interface SessionFacts {
  sessionId: string;
  account: string;
  transport: 'websocket' | 'webrtc';
  modality: 'voice' | 'text';
  resumed: boolean;
}

/** What a WebSocket transport reports: the error frames it sends and its downlink lateness (nothing when observability is off). */
export function socketMetrics({ metrics, active }: Observability): { errorSent(code: string): void; lateness?: FineHistogram } {
  if (!active) return { errorSent: () => undefined };
  return { errorSent: (code) => metrics.errors.inc({ code: errorCodeLabel(code) }), lateness: metrics.downlinkLateness.of('websocket') };
}

/** The telemetry of a session just accepted, or none when observability is off. */
export function sessionTelemetry(observability: Observability, log: Logger, facts: SessionFacts): SessionTelemetry | undefined {
  if (!observability.active) return undefined;
  return new SessionTelemetry(observability, log.child({ session_id: facts.sessionId, account: facts.account }), facts);
}

/**
 * One session as the operator sees it, from its accepted start to its close: the live-session
 * gauge, a span with each turn as a child, and per turn the waterfall's log line and histograms.
 */
export class SessionTelemetry implements SessionObserver {
  private readonly span: TraceSpan;
  private readonly turnLog: Logger;
  private ended = false;

  constructor(
    private readonly observability: Observability,
    log: Logger,
    private readonly facts: SessionFacts,
  ) {
    // The turn line holds ids, a status and numbers only: it skips the key redaction, which
    // doubled the cost of every line (turns are the most frequent thing logged).
    this.turnLog = log.child({}, { redact: [] });
    observability.metrics.sessionsActive.inc({ transport: facts.transport, modality: facts.modality });
    this.span = observability.tracing.root('parley.session', {
      'parley.session_id': facts.sessionId,
      'parley.account': facts.account,
      'parley.transport': facts.transport,
      'parley.modality': facts.modality,
      'parley.resumed': facts.resumed,
    });
  }

  openTurn(): TurnScope {
    return new TurnTelemetry(this, this.span.child('parley.turn', {}));
  }

  toolCallEnded(outcome: ToolOutcome): void {
    this.observability.metrics.toolCalls.inc(outcome);
  }

  /** The connection closed with this code. */
  end(closeCode: number): void {
    if (this.ended) return;
    this.ended = true;
    const { metrics } = this.observability;
    metrics.sessionsActive.dec({ transport: this.facts.transport, modality: this.facts.modality });
    metrics.sessionsTotal.inc({ close_code: closeCodeLabel(closeCode) });
    this.span.end({ 'parley.close_code': closeCode });
  }

  /** @internal */
  turnEnded(span: TraceSpan, reply: TurnSummary | undefined): void {
    if (!reply) return span.end({ 'parley.reply': false });
    const { metrics, tracing } = this.observability;
    metrics.turns.inc(reply.modality);
    for (const stage in reply.metrics) metrics.turnStage.of(stage).record(reply.metrics[stage as TurnStage]!);
    // The waterfall, one line per turn: what an operator greps for when a turn was slow.
    if (this.turnLog.isLevelEnabled('info')) this.turnLog.info({ turn_id: reply.turnId, status: reply.status, modality: reply.modality, stages: reply.metrics }, 'turn');
    if (!tracing.enabled) return;
    const attributes: Record<string, string | number> = { 'parley.turn_id': reply.turnId, 'parley.status': reply.status };
    for (const [stage, ms] of Object.entries(reply.metrics)) attributes[`parley.stage.${stage}_ms`] = ms;
    span.end(attributes, reply.status === 'error' ? 'the reply ended in error' : undefined);
  }
}

/** One turn's scope: a class, not closures, as it is made for every turn. */
class TurnTelemetry implements TurnScope {
  constructor(
    private readonly session: SessionTelemetry,
    private readonly span: TraceSpan,
  ) {}

  run<T>(fn: () => T): T {
    return this.span.run(fn);
  }

  end(reply: TurnSummary | undefined): void {
    this.session.turnEnded(this.span, reply);
  }
}
