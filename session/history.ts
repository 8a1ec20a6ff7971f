import { capText, DEFAULT_HISTORY_MAX_CHARS, sizeOf, trimToBudget, type HistorySlot } from './history-budget.ts';
import type { ChatMessage, ToolCallRequest } from './providers/llm.ts';

export type { HistorySlot };

export const DEFAULT_SYSTEM_PROMPT = [
  'You are a helpful voice and text assistant in a realtime conversation.',
  'Keep answers short and natural to speak aloud.',
  'When a tool result is not marked as succeeded and verified, never claim the action succeeded;',
  'say what is known and what is not.',
].join(' ');

/**
 * The conversation as the model sees it: instructions first, then turns and injected context in
 * the order they happened. One instance per session; a reset clears the turns only. It is kept
 * within a character budget (history-budget.ts): the oldest messages are dropped, so a model
 * request never grows past instructions + budget + a one-off note, however long the call.
 * A slot is a place held by whoever will write it: a reply reserves its slot when it starts, so
 * text injected while it streams lands after it, as it happened, not before it.
 */
export class ConversationHistory {
  private entries: HistorySlot[] = [];
  /** Characters of the written messages, against the budget. */
  private chars = 0;

  constructor(
    private readonly instructions: string | undefined,
    private readonly maxChars: number = DEFAULT_HISTORY_MAX_CHARS,
  ) {}

  addUser(text: string): void {
    this.push({ role: 'user', content: capText(text, this.maxChars) });
  }

  /** Host context the user did not say; the model is told where it came from. */
  addContext(text: string): void {
    this.push({ role: 'system', content: `Context from the application: ${capText(text, this.maxChars)}` });
  }

  /** Holds the next place for a message written later (a reply, a tool result). */
  reserve(): HistorySlot {
    const slot: HistorySlot = { message: undefined };
    this.entries.push(slot);
    return slot;
  }

  /** Fills a reserved slot; an empty assistant text leaves it out of the history. */
  fillAssistant(slot: HistorySlot, text: string, toolCalls?: ToolCallRequest[]): void {
    const content = capText(text, this.maxChars);
    if (toolCalls?.length) this.fill(slot, { role: 'assistant', content, tool_calls: toolCalls.map((c) => ({ ...c })) });
    else this.fill(slot, content.length > 0 ? { role: 'assistant', content } : undefined);
  }

  fillToolResult(slot: HistorySlot, callId: string, content: string): void {
    this.fill(slot, { role: 'tool', tool_call_id: callId, content: capText(content, this.maxChars) });
  }

  /** Replaces a reply's text with what the listener actually heard. */
  correctAssistant(slot: HistorySlot, text: string): void {
    if (slot.message?.role !== 'assistant' || slot.message.tool_calls) return;
    this.fill(slot, text.length > 0 ? { role: 'assistant', content: text } : undefined);
  }

  /** Removes the most recent user entry with this text (an eager reply's retracted transcript). */
  dropLastUser(text: string): void {
    for (let i = this.entries.length - 1; i >= 0; i -= 1) {
      const m = this.entries[i]!.message;
      if (m?.role === 'user' && m.content === text) {
        this.chars -= sizeOf(m);
        this.entries.splice(i, 1);
        return;
      }
    }
  }

  clear(): void {
    this.entries = [];
    this.chars = 0;
  }

  get length(): number {
    return this.messages().length;
  }

  /** Snapshot for one model request; `extra` is a one-off system note for that request only. */
  forModel(extra?: string): ChatMessage[] {
    const system = this.instructions
      ? `${DEFAULT_SYSTEM_PROMPT}\n\nApplication instructions:\n${this.instructions}`
      : DEFAULT_SYSTEM_PROMPT;
    const out: ChatMessage[] = [{ role: 'system', content: system }, ...this.messages()];
    if (extra) out.push({ role: 'system', content: extra });
    return out;
  }

  /** Copy of the written turns, for the resume stash. */
  snapshot(): ChatMessage[] {
    return this.messages().map((m) => structuredClone(m));
  }

  /**
   * The written turns without copying them: a message is never changed once written (a
   * correction or a filled slot writes a new one), so a serializer may cache each by identity.
   */
  view(): ChatMessage[] {
    return this.messages();
  }

  restore(messages: ChatMessage[]): void {
    this.entries = messages.map((m) => ({ message: structuredClone(m) }));
    this.chars = this.entries.reduce((sum, e) => sum + sizeOf(e.message), 0);
    this.trim();
  }

  private push(message: ChatMessage): void {
    this.entries.push({ message });
    this.chars += sizeOf(message);
    this.trim();
  }

  private fill(slot: HistorySlot, message: ChatMessage | undefined): void {
    if (!slot.dropped) this.chars += sizeOf(message) - sizeOf(slot.message);
    slot.message = message;
    this.trim();
  }

  private trim(): void {
    ({ entries: this.entries, total: this.chars } = trimToBudget(this.entries, this.chars, this.maxChars));
  }

  private messages(): ChatMessage[] {
    const out: ChatMessage[] = [];
    for (const e of this.entries) if (e.message) out.push(e.message);
    return out;
  }
}
