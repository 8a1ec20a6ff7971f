import { abortableDelay } from '../providers/abortable-delay.ts';
import { ModelError, type ChatMessage, type LanguageModel, type ModelEvent, type ModelRequest, type ModelTool, type ModelToolChoice } from '../providers/llm.ts';

export interface FakeToolCall {
  id?: string;
  name: string;
  args?: Record<string, unknown>;
}

/** One scripted answer, in the shapes the LanguageModel port speaks; `latencyMs` delays its first event. */
export type FakeReply = FakeReplyBody & { latencyMs?: number };

type FakeReplyBody =
  /** Streamed as text deltas: `chunkSize` characters each, or word by word keeping spaces; `delayMs` overrides the model's pace. */
  | { text: string; chunkSize?: number; delayMs?: number }
  /** Optional text first, then the calls; finish 'tool_calls'. */
  | { toolCalls: FakeToolCall[]; text?: string }
  /** The backend failed before any output (what adapters raise for HTTP errors, timeouts). */
  | { error: string; retryable?: boolean; status?: number }
  /** Streams this text, then fails (a connection that broke mid-reply). */
  | { failAfterText: string }
  /** Never answers; ends (without `finish`) only when the request is aborted. */
  | { hang: true };

/** A request as the model received it: the plain data of ModelRequest, without the signal. */
export interface RecordedRequest {
  messages: ChatMessage[];
  tools: ModelTool[];
  toolChoice: ModelToolChoice;
  temperature?: number;
  model?: string;
}

/**
 * A scripted LanguageModel for unit tests (livekit's FakeLLM idea): replies come from the
 * enqueue()d list first, then from the script, else `{ text: 'ok' }`. Every request is recorded
 * as plain data. With `delayMs`, each chunk after the first waits that long on the clock (fake
 * timers make it free), so interruptions can land mid-stream.
 */
export class FakeLanguageModel implements LanguageModel {
  readonly name = 'fake';
  readonly requests: RecordedRequest[] = [];
  delayMs = 0;
  private readonly queue: FakeReply[] = [];
  private scripted: ((request: RecordedRequest, index: number) => FakeReply) | undefined;
  private waiters: Array<() => boolean> = [];

  enqueue(...replies: FakeReply[]): void {
    this.queue.push(...replies);
  }

  script(fn: (request: RecordedRequest, index: number) => FakeReply): void {
    this.scripted = fn;
  }

  /** Resolves with the first request that matches, on its arrival (no polling). */
  waitRequest(predicate: (request: RecordedRequest, index: number) => boolean): Promise<RecordedRequest> {
    return new Promise((resolve) => {
      const check = (): boolean => {
        const found = this.requests.find(predicate);
        if (found) resolve(found);
        return found !== undefined;
      };
      if (!check()) this.waiters.push(check);
    });
  }

  /** Resolves once `count` requests were made. */
  async waitRequests(count: number): Promise<void> {
    await this.waitRequest((_, index) => index === count - 1);
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const { signal } = request;
    const recorded: RecordedRequest = structuredClone({
      messages: request.messages,
      tools: request.tools,
      toolChoice: request.toolChoice,
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      ...(request.model === undefined ? {} : { model: request.model }),
    });
    const index = this.requests.length;
    this.requests.push(recorded);
    this.waiters = this.waiters.filter((check) => !check());
    const reply = this.queue.shift() ?? this.scripted?.(recorded, index) ?? { text: 'ok' };
    if (reply.latencyMs) await abortableDelay(reply.latencyMs, signal);
    if (signal.aborted) return;
    if ('hang' in reply) return await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    if ('error' in reply) throw new ModelError(reply.error, reply.retryable ?? true, reply.status);
    let first = true;
    const delayMs = 'delayMs' in reply && reply.delayMs !== undefined ? reply.delayMs : this.delayMs;
    const pace = async (): Promise<boolean> => {
      if (!first && delayMs > 0) await abortableDelay(delayMs, signal);
      first = false;
      return !signal.aborted;
    };
    const text = 'failAfterText' in reply ? reply.failAfterText : reply.text ?? '';
    for (const piece of splitText(text, 'chunkSize' in reply ? reply.chunkSize : undefined)) {
      if (!(await pace())) return;
      yield { type: 'text', delta: piece };
    }
    if ('failAfterText' in reply) throw new ModelError('the stream broke before it finished', true);
    if ('toolCalls' in reply) {
      for (const [i, call] of reply.toolCalls.entries()) {
        if (!(await pace())) return;
        yield { type: 'tool_call', call: { id: call.id ?? `call_fake_${i}`, name: call.name, args: call.args ?? {} } };
      }
      if (!(await pace())) return;
      yield { type: 'finish', reason: 'tool_calls' };
      return;
    }
    if (!(await pace())) return;
    yield { type: 'finish', reason: 'stop' };
  }
}

function splitText(text: string, chunkSize?: number): string[] {
  if (chunkSize && chunkSize > 0) {
    const pieces: string[] = [];
    for (let i = 0; i < text.length; i += chunkSize) pieces.push(text.slice(i, i + chunkSize));
    return pieces;
  }
  return text.match(/\S+\s*|\s+/g) ?? [];
}
