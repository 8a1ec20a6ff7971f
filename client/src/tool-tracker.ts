import { NarrationTracker } from './narration-tracker.ts';
import { PendingAcks } from './pending-acks.ts';
import type { NarrationState, ServerFrameOf } from './types.ts';

type InjectAck = ServerFrameOf<'inject_context_ack'>;
type InteractionAck = ServerFrameOf<'tool_interaction_update_ack'>;

/**
 * Requests waiting for their acknowledgement and the narration states, fed by inbound frames:
 * inject_context_ack matched by message_id; tool_interaction_update_ack by call id and
 * interaction id, then by interaction id (the ack's id is the canonical call id, which differs
 * when a deferred handle was sent), then oldest first (the server answers every update, in order).
 */
export class ToolTracker {
  readonly narration = new NarrationTracker();
  private readonly injects = new PendingAcks<string, InjectAck>();
  private readonly updates = new PendingAcks<{ id: string; interactionId: string }, InteractionAck>();

  waitInject(messageId: string, timeoutMs: number): Promise<InjectAck> {
    return this.injects.wait(messageId, timeoutMs, 'inject_context_ack');
  }

  waitInteractionUpdate(id: string, interactionId: string, timeoutMs: number): Promise<InteractionAck> {
    return this.updates.wait({ id, interactionId }, timeoutMs, 'tool_interaction_update_ack');
  }

  onFrame(frame: { type: string }): void {
    if (frame.type === 'inject_context_ack') {
      const ack = frame as InjectAck;
      this.injects.settle(ack, (m) => m === ack.message_id);
    } else if (frame.type === 'tool_interaction_update_ack') {
      const ack = frame as InteractionAck;
      this.updates.settle(
        ack,
        (m) => m.id === ack.id && m.interactionId === ack.interaction_id,
        (m) => ack.interaction_id !== null && m.interactionId === ack.interaction_id,
        () => true,
      );
    } else if (frame.type === 'tool_job_narration') {
      this.narration.onFrame(frame as ServerFrameOf<'tool_job_narration'>);
    }
  }

  state(jobId: string): NarrationState | null {
    return this.narration.jobState(jobId);
  }

  /** The connection is gone: nothing waiting will be answered. */
  failAll(error: Error): void {
    this.injects.rejectAll(error);
    this.updates.rejectAll(error);
  }
}
