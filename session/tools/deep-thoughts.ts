import type { ConversationHistory } from '../history.ts';
import { randomId } from '../ids.ts';
import type { LanguageModel, ToolCallRequest } from '../providers/llm.ts';
import type { SessionSettings } from '../settings.ts';
import type { CompletionQueue } from './completion-queue.ts';
import { pairToolMessages } from './tool-messages.ts';
import type { ToolResolution } from './types.ts';

export interface DeepThoughtsHost {
  readonly settings: SessionSettings;
  readonly history: ConversationHistory;
  readonly llm: LanguageModel;
  /** DEEP_MODEL: the model think_deeply asks; the session's own when absent. */
  readonly deepModel: string | undefined;
  readonly completions: CompletionQueue;
}

interface DeepThought {
  jobId: string;
  abort: AbortController;
}

/**
 * think_deeply's background jobs: the call answers at once with a job id, the model thinks on the
 * conversation so far, and the answer enters the context and is voiced when the floor is free.
 */
export class DeepThoughts {
  private readonly running = new Map<string, DeepThought>();

  constructor(private readonly host: DeepThoughtsHost) {}

  get size(): number {
    return this.running.size;
  }

  start(call: ToolCallRequest): ToolResolution {
    const question = typeof call.args.question === 'string' ? call.args.question : JSON.stringify(call.args);
    const thought: DeepThought = { jobId: randomId('job', 6), abort: new AbortController() };
    this.running.set(thought.jobId, thought);
    void this.think(thought, question);
    return { outcome: 'unknown', verified: false, content: { status: 'thinking in the background', job_id: thought.jobId } };
  }

  /**
   * cancel_job for a thought: the one named, or with no name the latest one when no client job
   * runs. Undefined when the cancel is not for a thought.
   */
  cancel(jobId: string | undefined, clientJobs: number): ToolResolution | undefined {
    const thoughts = [...this.running.values()];
    const named = jobId ? this.running.get(jobId) : undefined;
    if (!named && (jobId || thoughts.length === 0 || clientJobs > 0)) return undefined;
    const t = named ?? thoughts[thoughts.length - 1]!;
    t.abort.abort();
    this.running.delete(t.jobId);
    return { outcome: 'succeeded', verified: true, content: `cancelled ${t.jobId}` };
  }

  close(): void {
    for (const t of this.running.values()) t.abort.abort();
  }

  private async think(thought: DeepThought, question: string): Promise<void> {
    const { host } = this;
    let answer = '';
    try {
      const stream = host.llm.stream({
        messages: [...pairToolMessages(host.history.forModel()), { role: 'user', content: `Think carefully and answer: ${question}` }],
        tools: [],
        toolChoice: 'none',
        temperature: host.settings.temperature,
        ...(host.deepModel ? { model: host.deepModel } : {}),
        signal: thought.abort.signal,
      });
      for await (const event of stream) if (event.type === 'text') answer += event.delta;
      if (thought.abort.signal.aborted) return;
      host.history.addContext(`The deeper answer to "${question}" (${thought.jobId}): ${answer}`);
      host.completions.push([thought.jobId], 'The deeper answer is ready (see context). Tell it to the user.');
    } catch (error) {
      if (thought.abort.signal.aborted) return;
      host.history.addContext(`Thinking deeply about "${question}" failed: ${error instanceof Error ? error.message : String(error)}`);
      host.completions.push([thought.jobId], 'The deeper thinking failed (see context). Tell the user briefly.');
    } finally {
      this.running.delete(thought.jobId);
    }
  }
}
