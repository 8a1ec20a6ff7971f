import type { ClientFrameOf } from './protocol/client.ts';
import type { ServerFrame } from './protocol/server.ts';
import type { ConversationHistory } from './history.ts';
import { newTurnId } from './ids.ts';
import type { TurnOptions } from './turn-contract.ts';

export interface ContextInjectionHost {
  readonly history: ConversationHistory;
  replying(): boolean;
  send(frame: ServerFrame): void;
  /** Injected user text counts as the user speaking (cancels a pending end of call). */
  userSpoke(): void;
  /** The injected user text takes the floor from a waiting interaction ask. */
  userTookFloor(): void;
  startReply(options: TurnOptions): void;
}

/**
 * inject_context: host-supplied user text or silent context, idempotent by message_id, with a
 * reply when asked for (default for role user) and the floor is free.
 */
/** message_ids remembered for idempotency: the newest ones, so a flood of fresh ids cannot grow a session. */
const REMEMBERED_IDS = 1024;

export class ContextInjection {
  private readonly delivered = new Set<string>();

  constructor(private readonly host: ContextInjectionHost) {}

  /** The ids already delivered, for a resume snapshot. */
  ids(): string[] {
    return [...this.delivered];
  }

  adopt(ids: readonly string[]): void {
    for (const id of ids) this.remember(id);
  }

  private remember(id: string): void {
    this.delivered.add(id);
    // A Set iterates in insertion order: the first one is the oldest.
    if (this.delivered.size > REMEMBERED_IDS) this.delivered.delete(this.delivered.values().next().value!);
  }

  clear(): void {
    this.delivered.clear();
  }

  inject(frame: ClientFrameOf<'inject_context'>): void {
    const { host } = this;
    const { message_id: messageId, role, text } = frame;
    const inputSource = role === 'user' ? 'text' : 'context';
    if (this.delivered.has(messageId)) {
      // Idempotent retry: the first delivery stands, nothing is added twice.
      return host.send({
        type: 'inject_context_ack', message_id: messageId, accepted: true, role, input_source: inputSource,
        reply_started: false, detail: 'duplicate message_id: already delivered',
      });
    }
    this.remember(messageId);
    const wantsReply = frame.reply ?? role === 'user';
    const canReply = wantsReply && !host.replying();
    const turnId = canReply ? newTurnId() : undefined;
    if (role === 'user') {
      host.userSpoke();
      if (canReply) host.userTookFloor();
      host.history.addUser(text);
      host.send({ type: 'asr', text, message_id: messageId, input_source: 'text', ...(turnId ? { turn_id: turnId } : {}) });
    } else {
      host.history.addContext(text);
    }
    host.send({
      type: 'inject_context_ack', message_id: messageId, accepted: true, role, input_source: inputSource,
      reply_started: canReply, ...(turnId ? { turn_id: turnId } : {}),
      ...(wantsReply && !canReply ? { detail: 'delivered; no reply started because another reply is in flight' } : {}),
    });
    if (turnId) host.startReply({ turnId, afterUserTurn: role === 'user' });
  }
}
