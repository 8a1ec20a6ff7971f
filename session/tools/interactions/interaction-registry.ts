import { MAX_INTERACTION_ID, type Ask } from './interaction.ts';

/**
 * Every ask raised in this session, by id. Ids are single-use for the session's life (a
 * superseded ask is re-raised under a fresh id); a resumed session starts with an empty
 * registry, so an id from before the reconnect is unknown.
 */
export class InteractionRegistry {
  private readonly asks = new Map<string, Ask>();
  /** Per call: the last n used in a derived `<call_id>#i<n>`. */
  private readonly derived = new Map<string, number>();

  used(id: string): boolean {
    return this.asks.has(id);
  }

  /** `<call_id>#i<n>`, n counting per call from 1; a long call id is cut so the id fits 64 characters. */
  deriveId(callId: string): string {
    let n = this.derived.get(callId) ?? 0;
    for (;;) {
      n += 1;
      const suffix = `#i${n}`;
      const id = `${callId.slice(0, MAX_INTERACTION_ID - suffix.length)}${suffix}`;
      if (!this.used(id)) {
        this.derived.set(callId, n);
        return id;
      }
    }
  }

  add(ask: Ask): void {
    this.asks.set(ask.id, ask);
  }

  get(id: string): Ask | undefined {
    return this.asks.get(id);
  }

  /** Asks of a call whose decision is still open. */
  openOn(callId: string): Ask[] {
    return this.all().filter((a) => a.callId === callId && !a.closed);
  }

  /** Voiced asks the conversation still has to settle, oldest first. */
  pendingDecisions(): Ask[] {
    return this.all().filter((a) => a.voiced && !a.decided && !a.closed && a.resolving === undefined);
  }

  all(): Ask[] {
    return [...this.asks.values()];
  }
}
