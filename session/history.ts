import type { ChatMessage } from './providers/llm.ts';

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

  addAssistant(text: string): void {
    if (text.length > 0) this.messages.push({ role: 'assistant', content: text });
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
