import type { ServerFrame } from '../signaling/frames/server.ts';
import type { ConversationHistory } from './history.ts';
import type { LanguageModel } from './providers/llm.ts';
import type { SessionSettings } from './settings.ts';

export type TurnStatus = 'completed' | 'interrupted' | 'canceled' | 'error';

export interface TurnContext {
  send(frame: ServerFrame): void;
  llm: LanguageModel;
  history: ConversationHistory;
  settings: SessionSettings;
  /** Current interruption sequence, stamped on utterances. */
  bargeSeq(): number;
  log: { warn(obj: object, msg: string): void };
}

export interface TurnOptions {
  turnId: string;
  /** Spoken verbatim instead of asking the model (greeting, sign-off). */
  fixedText?: string;
  welcome?: boolean;
  /** One-off system note for this reply only (trigger_reply instructions). */
  extraInstructions?: string;
}

/**
 * One assistant reply from `turn` to `done`. Every frame of the reply is sent from here so the
 * order SPEC requires (turn, text_delta*, utterance, done) holds on every path, including an
 * interruption arriving mid-stream, which is handled synchronously.
 */
export class TurnRunner {
  readonly turnId: string;
  private readonly abort = new AbortController();
  private text = '';
  private finished = false;
  private resolveDone!: (status: TurnStatus) => void;
  readonly done: Promise<TurnStatus> = new Promise((resolve) => (this.resolveDone = resolve));

  constructor(
    private readonly ctx: TurnContext,
    private readonly options: TurnOptions,
  ) {
    this.turnId = options.turnId;
  }

  get active(): boolean {
    return !this.finished;
  }

  /** Starts the reply; the returned promise is `done`. Never rejects. */
  start(): Promise<TurnStatus> {
    const turn: ServerFrame = this.options.welcome
      ? { type: 'turn', turn_id: this.turnId, welcome: true }
      : { type: 'turn', turn_id: this.turnId };
    this.ctx.send(turn);
    void this.run();
    return this.done;
  }

  /** The user took the floor: stop now, keep what was already delivered. */
  interrupt(bargeSeq: number): void {
    if (this.finished) return;
    this.abort.abort();
    this.ctx.send({ type: 'interrupted', turn_id: this.turnId, clear: true, barge_seq: bargeSeq });
    this.finish('interrupted');
  }

  private async run(): Promise<void> {
    try {
      if (this.options.fixedText !== undefined) {
        this.emitText(this.options.fixedText);
      } else {
        await this.streamFromModel();
      }
      if (!this.finished) this.finish('completed');
    } catch (error) {
      if (this.finished) return;
      const detail = error instanceof Error ? error.message : String(error);
      // SPEC: a model failure ends only this turn; the conversation goes on, so it is retryable.
      this.ctx.log.warn({ turn_id: this.turnId, err: detail }, 'model error ended the reply');
      this.ctx.send({ type: 'error', code: 'model_error', retryable: true, detail: `the model failed: ${detail}` });
      this.finish('error');
    }
  }

  private async streamFromModel(): Promise<void> {
    const stream = this.ctx.llm.stream({
      messages: this.ctx.history.forModel(this.options.extraInstructions),
      tools: [],
      toolChoice: 'none',
      temperature: this.ctx.settings.temperature,
      signal: this.abort.signal,
    });
    for await (const event of stream) {
      if (this.finished) return;
      if (event.type === 'text') this.emitText(event.delta);
    }
  }

  private emitText(delta: string): void {
    if (this.finished || delta.length === 0) return;
    this.text += delta;
    this.ctx.send({ type: 'text_delta', turn_id: this.turnId, delta });
  }

  private finish(status: TurnStatus): void {
    if (this.finished) return;
    this.finished = true;
    this.abort.abort();
    if (this.text.length > 0 || status === 'completed') {
      this.ctx.send({
        type: 'utterance',
        text: this.text,
        turn_id: this.turnId,
        barge_seq: this.ctx.bargeSeq(),
        corrected: false,
      });
    }
    this.ctx.history.addAssistant(this.text);
    this.ctx.send({ type: 'done', turn_id: this.turnId, status });
    this.resolveDone(status);
  }
}
