import type { ChatMessage, ToolCallRequest } from './providers/llm.ts';

export const DEFAULT_SYSTEM_PROMPT = [
  'You are a helpful voice and text assistant in a realtime conversation.',
  'Keep answers short and natural to speak aloud.',
  'When a tool result is not marked as succeeded and verified, never claim the action succeeded;',
  'say what is known and what is not.',
].join(' ');

/**
 * The conversation as the model sees it: instructions first, then turns and injected context in
 * the order they happened. One instance per session; a reset clears the turns only.
 */
export class ConversationHistory {
  private messages: ChatMessage[] = [];

  constructor(private instructions: string | undefined) {}

  setInstructions(instructions: string | undefined): void {
    this.instructions = instructions;
  }

  addUser(text: string): void {
    this.messages.push({ role: 'user', content: text });
  }

  /** Returns the entry's index so a playback report can later truncate it; undefined when empty. */
  addAssistant(text: string): number | undefined {
    if (text.length === 0) return undefined;
    this.messages.push({ role: 'assistant', content: text });
    return this.messages.length - 1;
  }

  /** Replaces an assistant entry's text with what the listener actually heard. */
  correctAssistant(index: number, text: string): void {
    const entry = this.messages[index];
    if (entry?.role !== 'assistant') return;
    if (text.length > 0) entry.content = text;
    else this.messages.splice(index, 1);
  }

  /** Removes the most recent user entry (an eager reply's transcript that the user went on from). */
  dropLastUser(text: string): void {
    for (let i = this.messages.length - 1; i >= 0; i -= 1) {
      const m = this.messages[i];
      if (m?.role === 'user' && m.content === text) {
        this.messages.splice(i, 1);
        return;
      }
    }
  }

  /** An assistant message that called tools (with any text said before the calls). */
  addToolCalls(text: string, calls: ToolCallRequest[]): void {
    this.messages.push({ role: 'assistant', content: text, tool_calls: calls.map((c) => ({ ...c })) });
  }

  addToolResult(callId: string, content: string): void {
    this.messages.push({ role: 'tool', tool_call_id: callId, content });
  }

  /** Host context the user did not say; the model is told where it came from. */
  addContext(text: string): void {
    this.messages.push({ role: 'system', content: `Context from the application: ${text}` });
  }

  clear(): void {
    this.messages = [];
  }

  get length(): number {
    return this.messages.length;
  }

  /** Snapshot for one model request; `extra` is a one-off system note for that request only. */
  forModel(extra?: string): ChatMessage[] {
    const system = this.instructions
      ? `${DEFAULT_SYSTEM_PROMPT}\n\nApplication instructions:\n${this.instructions}`
      : DEFAULT_SYSTEM_PROMPT;
    const out: ChatMessage[] = [{ role: 'system', content: system }, ...this.messages];
    if (extra) out.push({ role: 'system', content: extra });
    return out;
  }

  /** Copy of the turns, for the resume stash. */
  snapshot(): ChatMessage[] {
    return this.messages.map((m) => ({ ...m }));
  }

  restore(messages: ChatMessage[]): void {
    this.messages = messages.map((m) => ({ ...m }));
  }
}
