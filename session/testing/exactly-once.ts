import type { ChatMessage } from '../providers/llm.ts';

/**
 * The pieces the exactly-once episodes share in both rings (session core on a recording
 * transport, and real sockets): the tools, what the scripted model does, and the ledger that
 * counts results lost and doubled.
 */

export const EPISODE_TOOLS = [
  { name: 'alpha', parameters: { type: 'object', properties: {} } },
  { name: 'beta', parameters: { type: 'object', properties: {} } },
  { name: 'slow', deferrable: true, parameters: { type: 'object', properties: {} } },
];

/** A user turn that makes the model call tools: `go <key> <count>`. */
export const goText = (key: string, calls: 1 | 2): string => `go ${key} ${calls}`;

/** The content a client returns for a call: unique, so it can be counted in the history. */
export const resultToken = (callId: string): string => `RESULT<${callId}>`;

export type EpisodeReply = { calls: { id: string; name: string }[] } | { text: string };

/**
 * The scripted model: a user turn `go <key> <n>` is answered with n tool calls (ids from the
 * key; names from it too, so a seed decides them); anything else (after tool results, a
 * voiceover of a late result, a narration) with a short text.
 */
export function episodeReply(messages: readonly ChatMessage[]): EpisodeReply {
  const last = messages.at(-1);
  const go = last?.role === 'user' ? /^go (\S+) ([12])$/.exec(last.content) : null;
  if (!go) return { text: last?.role === 'tool' ? 'Done with those.' : 'Noted.' };
  const [, key, count] = go;
  const names = ['alpha', 'beta', 'slow'];
  const first = key!.length % 3;
  return { calls: Array.from({ length: Number(count) }, (_, k) => ({ id: `${key}-${k}`, name: names[(first + k) % 3]! })) };
}

interface CallRecord {
  produced: boolean;
  /** Deliveries the server took (no unknown_tool_call). */
  accepted: number;
  /** Deliveries it refused as unknown or already closed. */
  refused: number;
}

/** Per call: did the client produce a result, how often the server took it, and where it ended up. */
export class ResultLedger {
  private readonly calls = new Map<string, CallRecord>();

  private record(callId: string): CallRecord {
    let r = this.calls.get(callId);
    if (!r) this.calls.set(callId, (r = { produced: false, accepted: 0, refused: 0 }));
    return r;
  }

  produced(callId: string): void {
    this.record(callId).produced = true;
  }

  delivered(callId: string, accepted: boolean): void {
    const r = this.record(callId);
    if (accepted) r.accepted += 1;
    else r.refused += 1;
  }

  get producedCount(): number {
    return [...this.calls.values()].filter((r) => r.produced).length;
  }

  /**
   * Against the final model request (the whole history): a result the server took must be in it
   * exactly once (else lost, or doubled); the server may take each result only once.
   */
  verdict(history: readonly ChatMessage[]): { lost: string[]; doubled: string[]; accepted: number } {
    const text = JSON.stringify(history);
    const lost: string[] = [];
    const doubled: string[] = [];
    let accepted = 0;
    for (const [id, r] of this.calls) {
      const seen = text.split(resultToken(id)).length - 1;
      if (r.accepted > 0) accepted += 1;
      if (r.accepted > 0 && seen === 0) lost.push(id);
      if (r.accepted > 1 || seen > 1) doubled.push(id);
    }
    return { lost, doubled, accepted };
  }
}
