import type { ChatMessage } from './providers/llm.ts';

/** Characters of conversation kept for the model when the deployment sets nothing. */
export const DEFAULT_HISTORY_MAX_CHARS = 100_000;

/** The place of one message in the history (a reply reserves its place before it is written). */
export interface HistorySlot {
  message: ChatMessage | undefined;
  /** Dropped by the budget: whoever writes it later writes outside the history. */
  dropped?: true;
}

/** What a message costs against the budget: its text, plus its tool calls as JSON. */
export function sizeOf(message: ChatMessage | undefined): number {
  if (!message) return 0;
  const calls = message.role === 'assistant' && message.tool_calls ? JSON.stringify(message.tool_calls).length : 0;
  return message.content.length + calls;
}

/** One message may hold at most a quarter of the budget; longer text keeps its head. */
export function capText(text: string, maxChars: number): string {
  const limit = Math.max(2000, Math.floor(maxChars / 4));
  if (text.length <= limit) return text;
  const cut = text.length - limit;
  return `${text.slice(0, limit)} … [${cut} more characters cut to fit the conversation budget]`;
}

const MARKER = 'Earlier parts of this conversation were left out to stay within its length budget';

/**
 * Keeps a history within `maxChars`: the oldest written messages are dropped (not summarised)
 * until it fits, with one system note at the front saying so. The newest user message always
 * stays, and so do places still reserved for a message that is not written yet (a reply, a tool
 * result). A tool call dropped without its result, or a result without its call, is tidied up
 * when the request is built (pairToolMessages).
 */
export function trimToBudget(entries: HistorySlot[], total: number, maxChars: number): { entries: HistorySlot[]; total: number } {
  if (total <= maxChars) return { entries, total };
  // Trim a tenth below the budget so a long conversation trims now and then, not every turn.
  const target = Math.floor(maxChars * 0.9);
  let lastUser = entries.length;
  for (let i = entries.length - 1; i >= 0; i -= 1) {
    if (entries[i]!.message?.role === 'user') {
      lastUser = i;
      break;
    }
  }
  let dropped = 0;
  const kept: HistorySlot[] = [];
  entries.forEach((entry, i) => {
    const m = entry.message;
    const marker = m?.role === 'system' && m.content.startsWith(MARKER);
    if (marker) {
      dropped += Number(/\((\d+) messages\)/.exec(m.content)?.[1] ?? 0);
      total -= sizeOf(m);
      return;
    }
    if (total > target && i !== lastUser && m) {
      total -= sizeOf(m);
      dropped += 1;
      entry.dropped = true;
      return;
    }
    kept.push(entry);
  });
  const note: ChatMessage = { role: 'system', content: `${MARKER} (${dropped} messages).` };
  return { entries: [{ message: note }, ...kept], total: total + sizeOf(note) };
}
