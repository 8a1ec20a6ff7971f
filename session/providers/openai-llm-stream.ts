/**
 * The Chat Completions stream as it arrives: a BodySink fed by undici's parser (Upstream.stream)
 * that cuts SSE events from the bytes as they come, and reads each `chat.completion.chunk` into
 * ModelEvents when the adapter's generator asks for the next event: a read that brought a whole
 * answer (one HTTP chunk per event) is cut into strings while undici parses it, and only the
 * first chunk's JSON is read before the first text is yielded (reading all of them first held
 * the first text ~0.1 ms). The generator waits (one promise) only when nothing is pending.
 */
import { randomUUID } from 'node:crypto';
import type { ModelError, ModelEvent, ToolCallRequest } from './llm.ts';
import { redact } from './http/failure.ts';
import type { BodySink } from './http/body-handler.ts';
import { SseParser } from './http/sse.ts';
import { Upstream } from './http/upstream.ts';

type FinishReason = Extract<ModelEvent, { type: 'finish' }>['reason'];

export class ChunkReader implements BodySink {
  /** Set once the stream is over: [DONE] or the body's end (events may still be queued). */
  finished = false;
  /** The caller's abort ended the body. */
  aborted = false;
  /** Thrown by the generator once the events queued before it are yielded. */
  failure: ModelError | undefined;
  private readonly queue: ModelEvent[] = [];
  private head = 0;
  private readonly sse = new SseParser();
  private readonly acc = new CompletionAccumulator();
  /** SSE data cut from the body, not read yet: `payloads[read..]`. */
  private readonly payloads: string[] = [];
  private read = 0;
  private wake: (() => void) | undefined;

  constructor(
    private readonly upstream: Upstream<ModelError>,
    private readonly onWarning?: (message: string) => void,
  ) {}

  /** The next event, or undefined when none is waiting (or the stream failed: see `failure`). */
  next(): ModelEvent | undefined {
    while (this.head === this.queue.length && this.takeOne());
    if (this.head === this.queue.length) return undefined;
    const event = this.queue[this.head] as ModelEvent;
    this.head += 1;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    return event;
  }

  /** Resolves at the next read, end or failure. */
  wait(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  data(chunk: Buffer): void {
    if (this.finished || this.failure) return;
    this.sse.push(chunk, this.payloads);
    if (this.read < this.payloads.length) this.notify();
  }

  end(): void {
    if (this.finished || this.failure) return;
    this.sse.end(this.payloads);
    this.takeAll();
    if (!this.finished && !this.failure) {
      if (this.acc.finishReason === undefined) this.failure = this.upstream.fail('ended_early', 'the stream ended without a finish_reason or [DONE]');
      else this.close();
    }
    this.notify();
  }

  error(error: Error): void {
    if (this.finished || this.failure) return;
    if (error === Upstream.CALLER_ABORTED) {
      this.aborted = true;
    } else {
      // What arrived before the break is still delivered, then the failure.
      this.takeAll();
      this.failure ??= this.upstream.bodyFailure(error);
    }
    this.notify();
  }

  private takeAll(): void {
    while (this.takeOne());
  }

  /** Reads the next pending chunk into events; false when none is pending or the stream is over. */
  private takeOne(): boolean {
    if (this.finished || this.failure || this.read === this.payloads.length) return false;
    const data = this.payloads[this.read] as string;
    this.read += 1;
    if (this.read === this.payloads.length) {
      this.payloads.length = 0;
      this.read = 0;
    }
    try {
      if (data === '[DONE]') this.close();
      else this.acc.apply(this.parseChunk(data), this.queue);
    } catch (error) {
      this.failure = error as ModelError;
    }
    return true;
  }

  /** The answer is complete: its tool calls, usage and finish follow the text. */
  private close(): void {
    this.finished = true;
    for (const call of this.acc.toolCalls(this.onWarning)) this.queue.push({ type: 'tool_call', call });
    const usage = this.acc.usage;
    if (usage) this.queue.push({ type: 'usage', inputTokens: usage.input, outputTokens: usage.output });
    this.queue.push({ type: 'finish', reason: mapFinishReason(this.acc.finishReason) });
  }

  private notify(): void {
    const wake = this.wake;
    if (wake === undefined) return;
    this.wake = undefined;
    wake();
  }

  private parseChunk(data: string): WireChunk {
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw this.upstream.fail('malformed', `stream chunk is not JSON: ${data}`);
    }
    if (typeof chunk !== 'object' || chunk === null) throw this.upstream.fail('malformed', `stream chunk is not an object: ${data}`);
    const wire = chunk as WireChunk;
    if (wire.error) {
      const detail = typeof wire.error === 'string' ? wire.error : (wire.error.message ?? JSON.stringify(wire.error));
      const status = typeof wire.error === 'object' && typeof wire.error.code === 'number' ? wire.error.code : undefined;
      // An error event inside a 200 stream: retryable unless its code says otherwise.
      throw this.upstream.fail('upstream_error', detail, status);
    }
    return wire;
  }
}

interface WireToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface WireChunk {
  choices?: { delta?: { content?: string | null; tool_calls?: WireToolCallDelta[] }; finish_reason?: string | null }[];
  /** With stream_options.include_usage: on the last chunk (whose choices are empty). */
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
  error?: { message?: string; code?: unknown } | string;
}

class CompletionAccumulator {
  finishReason: string | undefined;
  usage: { input: number; output: number } | undefined;
  private readonly calls = new Map<number, { id?: string; name: string; args: string }>();

  /** Records tool-call fragments and the finish reason; queues the chunk's text delta. */
  apply(chunk: WireChunk, out: ModelEvent[]): void {
    const { usage } = chunk;
    if (usage && isCount(usage.prompt_tokens) && isCount(usage.completion_tokens)) {
      this.usage = { input: usage.prompt_tokens, output: usage.completion_tokens };
    }
    const choice = chunk.choices?.[0];
    if (!choice) return;
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    const delta = choice.delta;
    delta?.tool_calls?.forEach((fragment, position) => {
      // Some servers omit `index` on single-call streams; fall back to array position.
      const index = typeof fragment.index === 'number' ? fragment.index : position;
      const call = this.calls.get(index) ?? { name: '', args: '' };
      if (fragment.id) call.id = fragment.id;
      if (fragment.function?.name) call.name = fragment.function.name;
      if (typeof fragment.function?.arguments === 'string') call.args += fragment.function.arguments;
      this.calls.set(index, call);
    });
    if (typeof delta?.content === 'string' && delta.content !== '') out.push({ type: 'text', delta: delta.content });
  }

  toolCalls(warn?: (message: string) => void): ToolCallRequest[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({
        id: call.id ?? `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
        name: call.name,
        args: parseArgs(call.name, call.args, warn),
      }));
  }
}

function parseArgs(name: string, raw: string, warn?: (message: string) => void): Record<string, unknown> {
  if (raw.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // fall through to the warning
  }
  warn?.(`tool call ${name}: arguments are not a JSON object, using {}: ${redact(raw)}`);
  return {};
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function mapFinishReason(reason: string | undefined): FinishReason {
  return reason === 'stop' || reason === 'tool_calls' || reason === 'length' ? reason : 'other';
}
