import { describe, expect, it } from 'vitest';
import { ContextInjection } from './context-injection.ts';
import { ConversationHistory } from './history.ts';
import type { ChatMessage } from './providers/llm.ts';
import { pairToolMessages } from './tools/tool-messages.ts';

const chars = (messages: ChatMessage[]): number => messages.reduce((n, m) => n + m.content.length + (m.role === 'assistant' && m.tool_calls ? JSON.stringify(m.tool_calls).length : 0), 0);

/** One exchange: the user's text and the assistant's answer. */
function exchange(history: ConversationHistory, user: string, reply: string): void {
  history.addUser(user);
  history.fillAssistant(history.reserve(), reply);
}

describe('the history is kept within its character budget', () => {
  it('150 turns of 20,000 characters: the request stays within the budget, the newest turn stays whole, a note says what was left out', () => {
    const history = new ConversationHistory('Be brief.', 100_000);
    for (let i = 0; i < 150; i += 1) exchange(history, `${i}:${'u'.repeat(20_000)}`, `answer ${i}`);
    const messages = history.forModel();
    const [system, note, ...rest] = messages;
    expect(system!.content).toContain('Be brief.');
    expect(note).toMatchObject({ role: 'system', content: expect.stringMatching(/left out .*\(\d+ messages\)/) });
    expect(chars([note!, ...rest])).toBeLessThanOrEqual(100_000);
    expect(rest.at(-2)).toEqual({ role: 'user', content: `149:${'u'.repeat(20_000)}` });
    expect(rest.at(-1)).toEqual({ role: 'assistant', content: 'answer 149' });
    const droppedCount = Number(/\((\d+) messages\)/.exec(note!.content)![1]);
    expect(droppedCount + rest.length).toBe(300);
  });

  it('a single message longer than a quarter of the budget keeps its head and says how much was cut', () => {
    const history = new ConversationHistory(undefined, 40_000);
    history.addUser('fetch it');
    const slot = history.reserve();
    history.fillToolResult(slot, 'call_1', 'r'.repeat(50_000));
    const result = history.forModel().at(-1)!;
    expect(result.role).toBe('tool');
    expect(result.content.startsWith('r'.repeat(10_000))).toBe(true);
    expect(result.content).toMatch(/40000 more characters cut/);
  });

  it('a place reserved for a reply survives a flood of context, and the reply lands in it', () => {
    const history = new ConversationHistory(undefined, 10_000);
    history.addUser('question');
    const reply = history.reserve();
    for (let i = 0; i < 200; i += 1) history.addContext(`note ${i} ${'c'.repeat(500)}`);
    history.fillAssistant(reply, 'the answer');
    const messages = history.forModel();
    expect(chars(messages.slice(1))).toBeLessThanOrEqual(10_000 + 'the answer'.length);
    expect(messages.map((m) => m.content)).toContain('the answer');
    expect(messages.map((m) => m.content)).toContain('question');
  });

  it('a tool call trimmed away leaves no orphan result in the request (the backend would refuse it)', () => {
    const history = new ConversationHistory(undefined, 8_000);
    history.addUser('do it');
    history.fillAssistant(history.reserve(), '', [{ id: 'call_1', name: 'act', args: {} }]);
    history.fillToolResult(history.reserve(), 'call_1', '{"outcome":"succeeded"}');
    for (let i = 0; i < 20; i += 1) exchange(history, `more ${i} ${'x'.repeat(800)}`, 'ok');
    const request = pairToolMessages(history.forModel());
    for (const [i, m] of request.entries()) {
      if (m.role === 'tool') expect(request[i - 1]?.role === 'assistant' || request[i - 1]?.role === 'tool').toBe(true);
    }
    expect(request.some((m) => m.role === 'tool' && m.tool_call_id === 'call_1')).toBe(false);
  });

  it('a restored snapshot over the budget is trimmed on restore', () => {
    const big = new ConversationHistory(undefined, 1_000_000);
    for (let i = 0; i < 50; i += 1) exchange(big, `q${i} ${'q'.repeat(5_000)}`, `a${i}`);
    const small = new ConversationHistory(undefined, 20_000);
    small.restore(big.snapshot());
    expect(chars(small.forModel().slice(1))).toBeLessThanOrEqual(20_000);
    expect(small.forModel().at(-1)).toEqual({ role: 'assistant', content: 'a49' });
  });
});

describe('inject_context message ids', () => {
  it('are remembered for idempotency up to the newest 1024, so a flood of fresh ids cannot grow the session', () => {
    const history = new ConversationHistory(undefined, 10_000);
    const sent: unknown[] = [];
    const injection = new ContextInjection({ history, replying: () => true, send: (f) => sent.push(f), userSpoke: () => {}, userTookFloor: () => {}, startReply: () => {} });
    for (let i = 0; i < 5000; i += 1) injection.inject({ type: 'inject_context', message_id: `m${i}`, text: 'x', role: 'context' });
    expect(injection.ids()).toHaveLength(1024);
    expect(injection.ids()[0]).toBe('m3976');
    injection.inject({ type: 'inject_context', message_id: 'm4999', text: 'x', role: 'context' });
    expect(sent.at(-1)).toMatchObject({ detail: expect.stringContaining('duplicate') });
  });
});
