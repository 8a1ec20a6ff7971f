import { abortableDelay } from './abortable-delay.ts';
import type { LanguageModel, ModelEvent, ModelRequest } from './llm.ts';
import { composeLocalReply } from './local-reply.ts';
import { plannedToolCall, replyToToolResults } from './local-tools.ts';

/**
 * The offline default model: deterministic replies (see local-reply.ts), streamed word by word
 * with a configurable pace so interruption and streaming behave as with a real model.
 */
export class LocalLanguageModel implements LanguageModel {
  readonly name = 'local';

  constructor(private readonly wordDelayMs: number = 0) {}

  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const call = plannedToolCall(request);
    if (call) {
      yield { type: 'tool_call', call };
      yield { type: 'finish', reason: 'tool_calls' };
      return;
    }
    const reply = replyToToolResults(request.messages) ?? composeLocalReply(request.messages);
    const words = reply.match(/\S+\s*/g) ?? [];
    for (const [index, word] of words.entries()) {
      if (request.signal.aborted) return;
      if (this.wordDelayMs > 0 && index > 0) {
        await abortableDelay(this.wordDelayMs, request.signal);
        if (request.signal.aborted) return;
      }
      yield { type: 'text', delta: word };
    }
    yield { type: 'finish', reason: 'stop' };
  }
}
