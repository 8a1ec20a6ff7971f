import type { ChatMessage } from '../providers/llm.ts';
import { describeResolution } from './types.ts';

const STILL_RUNNING = describeResolution({
  outcome: 'unknown',
  verified: false,
  content: 'no result yet: this call is still running and its result will be reported when it arrives',
});

/**
 * The history as a Chat Completions backend accepts it. OpenAI-compatible servers reject (HTTP
 * 400) an assistant message with tool_calls that is not followed at once by one tool message per
 * call, and a tool message that answers no call right before it. While a call runs, other
 * entries land in the history between the call and its result (progress and partial notes, a
 * typed permission answer, job endings, a user turn that cut in), a request can be made before
 * the result is recorded (a cut-in turn, think_deeply's deep request), and a reset can leave a
 * late result without its call. So each tool message is moved right after the call it answers,
 * what came in between follows the results in its original order, a call with no result yet is
 * answered "still running", and a result whose call is gone is dropped.
 */
export function pairToolMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  // Some backends number call ids per response (call_0, call_1...), so an id can come back in a
  // later turn: results are matched to calls of the same id in order.
  const results = new Map<string, ChatMessage[]>();
  for (const m of messages) {
    if (m.role !== 'tool') continue;
    const queue = results.get(m.tool_call_id);
    if (queue) queue.push(m);
    else results.set(m.tool_call_id, [m]);
  }
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role === 'tool') continue;
    out.push(m);
    if (m.role !== 'assistant' || !m.tool_calls || m.tool_calls.length === 0) continue;
    for (const call of m.tool_calls) {
      out.push(results.get(call.id)?.shift() ?? { role: 'tool', tool_call_id: call.id, content: STILL_RUNNING });
    }
  }
  return out;
}
