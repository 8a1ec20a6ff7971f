import type { SessionObserver, TurnScope, TurnSummary } from '../../session/observer.ts';
import type { ToolOutcome } from '../../session/tools/types.ts';
import type { Logger } from '../log.ts';
import { closeCodeLabel } from './metrics.ts';
import type { Observability } from './observability.ts';
import type { TraceSpan } from './tracing.ts';

export interface SessionFacts {
  sessionId: string;
  account: string;
  transport: 'websocket' | 'webrtc';
  modality: 'voice' | 'text';
  resumed: boolean;
}

/**
 * One session as the operator sees it, from its accepted start to its close: the live-session
 * gauge, a span with each turn as a child, and per turn the waterfall's log line and histograms.
 */
export class SessionTelemetry implements SessionObserver {
  private readonly span: TraceSpan;
  private ended = false;

  constructor(
    private readonly observability: Observability,
    private readonly log: Logger,
    private readonly facts: SessionFacts,
  ) {
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
    const span = this.span.child('parley.turn', {});
    return { run: (fn) => span.run(fn), end: (reply) => this.turnEnded(span, reply) };
  }

  toolCallEnded(outcome: ToolOutcome): void {
    this.observability.metrics.toolCalls.inc({ outcome });
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

  private turnEnded(span: TraceSpan, reply: TurnSummary | undefined): void {
    if (!reply) return span.end({ 'parley.reply': false });
    const { metrics } = this.observability;
    metrics.turns.inc({ modality: reply.modality });
    const attributes: Record<string, string | number> = { 'parley.turn_id': reply.turnId, 'parley.status': reply.status };
    for (const [stage, ms] of Object.entries(reply.metrics)) {
      metrics.turnStage.observe({ stage }, ms / 1000);
      attributes[`parley.stage.${stage}_ms`] = ms;
    }
    // The waterfall, one line per turn: what an operator greps for when a turn was slow.
    this.log.info({ turn_id: reply.turnId, status: reply.status, modality: reply.modality, stages: reply.metrics }, 'turn');
    span.end(attributes, reply.status === 'error' ? 'the reply ended in error' : undefined);
  }
}
