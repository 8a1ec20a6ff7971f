import { nestsTooDeep } from './protocol/bounded-json.ts';
import { errorFrame, type SessionErrorCode } from './protocol/errors.ts';
import type { ServerFrame } from './protocol/server.ts';
import type { HistorySlot } from './history.ts';
import type { ToolCallRequest } from './providers/llm.ts';
import { clientDetail } from './providers/provider-error.ts';
import { FLOOR_YIELD } from './tools/tool-calls.ts';
import { pairToolMessages } from './tools/tool-messages.ts';
import type { ToolRoundResult } from './tools/types.ts';
import type { TurnObservation } from './turn-observation.ts';
import { ModelTokens } from './usage/model-tokens.ts';
import type { SpeechTurn } from './voice/speech-output.ts';
import type { TurnContext, TurnOptions, TurnRecord, TurnStatus } from './turn-contract.ts';

/**
 * The reason a finished turn aborts its signal with: made once, since abort() without a reason
 * builds a DOMException with a stack trace on every turn.
 */
const TURN_OVER = Object.freeze(new Error('the turn is over'));

/** Planning rounds per reply; a model that keeps calling tools past this is cut off. */
const MAX_TOOL_ROUNDS = 8;

/**
 * One assistant reply from `turn` to `done`. Every frame of the reply is sent from here, so the
 * order SPEC requires (turn, text_delta*, utterance, done; deltas ahead of their audio) holds on
 * every path, including an interruption, which is handled synchronously.
 */
export class TurnRunner {
  readonly turnId: string;
  private readonly abort = new AbortController();
  private text = '';
  /** Text since the last tool round: what the final assistant message holds. */
  private roundText = '';
  private farewell: string | undefined;
  private working = false;
  /** Blocked in a tool round, waiting on its calls' results. */
  private waitingOnTools = false;
  /** Resolves once the current tool round's results are in the history. */
  private toolRound: Promise<void> = Promise.resolve();
  /** Where this reply's current text goes in the history, reserved when the round began. */
  private slot: HistorySlot | undefined;
  private uttered = false;
  private finished = false;
  private speech: SpeechTurn | undefined;
  /** The model request in flight: its tokens belong to this turn even when it is cut short. */
  private tokens: ModelTokens | undefined;
  private readonly observation: TurnObservation;
  private resolveDone!: (record: TurnRecord) => void;
  readonly done: Promise<TurnRecord> = new Promise((resolve) => (this.resolveDone = resolve));
  private resolveSettled!: () => void;
  /** Its work has stopped (after `done`): an interrupted tool round's results are recorded. */
  readonly settled: Promise<void> = new Promise((resolve) => (this.resolveSettled = resolve));

  constructor(
    private readonly ctx: TurnContext,
    private readonly options: TurnOptions,
  ) {
    this.turnId = options.turnId;
    this.observation = options.observation ?? ctx.observe();
  }

  get active(): boolean {
    return !this.finished;
  }

  /** Starts the reply; the returned promise is `done`. Never rejects. */
  start(): Promise<TurnRecord> {
    this.ctx.send(this.options.welcome ? { type: 'turn', turn_id: this.turnId, welcome: true } : { type: 'turn', turn_id: this.turnId });
    this.speech = this.ctx.speech?.begin(this.ctx.settings.voice, (error) => this.fail('tts_error', error), this.observation);
    this.slot = this.ctx.history.reserve();
    // Inside the turn's scope, so the provider calls of every round belong to this turn. On the
    // next tick: a transport that batches a tick's frames (the WebSocket's cork) then sends this
    // turn's first frames before the provider request is built, not after (measured: held 5 to
    // 60 ms behind an OpenAI-compatible request's setup on a busy machine).
    process.nextTick(() => this.observation.run(() => void this.run()));
    return this.done;
  }

  /**
   * The user took the floor: stop now, keep what was already delivered. `speechOnsetAt`: when the
   * speech that barged in began (the barge-in stage runs from there to the downlink stopping).
   */
  interrupt(bargeSeq: number, speechOnsetAt?: number): void {
    if (speechOnsetAt !== undefined && !this.finished) this.observation.mark('speechOnset', speechOnsetAt);
    this.stop('interrupted', { type: 'interrupted', turn_id: this.turnId, clear: true, barge_seq: bargeSeq });
  }

  /**
   * A call this turn waits on raised a question for the user: the turn stops waiting and ends
   * now (done, status completed; the calls are told "still running"), so the question is voiced
   * at once in a narration turn. Resolves once the round's results ("still running") are in the
   * history, so the narration's request sees them; undefined when the turn is not blocked in a
   * tool round.
   */
  yieldFloor(): Promise<void> | undefined {
    if (this.finished || !this.waitingOnTools) return undefined;
    this.abort.abort(FLOOR_YIELD);
    this.speech?.stop();
    this.sendUtterance();
    this.finish('completed');
    return this.toolRound;
  }

  /** An eager reply is retracted: its playback was never committed. */
  cancel(): void {
    this.stop('canceled', { type: 'canceled', turn_id: this.turnId });
  }

  private stop(status: TurnStatus, frame: ServerFrame): void {
    if (this.finished) return;
    this.abort.abort(TURN_OVER);
    this.speech?.stop();
    this.ctx.send(frame);
    this.finish(status);
  }

  private async run(): Promise<void> {
    try {
      if (this.options.fixedText !== undefined) this.emitText(this.options.fixedText);
      else await this.streamFromModel();
      if (this.finished) return;
      this.sendUtterance();
      await this.speech?.end();
      this.finish('completed');
    } catch (error) {
      this.fail('model_error', error);
    } finally {
      this.resolveSettled();
    }
  }

  /**
   * SPEC: a provider failure ends only this turn (error, utterance, done error); the conversation
   * goes on, so it is retryable. The client reads our words; the provider's go to the log. When
   * speech fails after the utterance went out, a corrected utterance says what was really sent.
   */
  private fail(code: Extract<SessionErrorCode, 'model_error' | 'tts_error'>, error: unknown): void {
    if (this.finished) return;
    const what = code === 'model_error' ? 'the model' : 'speech synthesis';
    this.ctx.log.warn({ turn_id: this.turnId, err: error instanceof Error ? error.message : String(error) }, `${what} failed: the reply ends`);
    this.abort.abort(TURN_OVER);
    this.speech?.stop();
    this.ctx.send(errorFrame(code, clientDetail(error, `${what} failed`)));
    if (this.uttered && this.speech && this.speech.sentText !== this.text) {
      this.ctx.send({ type: 'utterance', text: this.speech.sentText, turn_id: this.turnId, barge_seq: this.ctx.bargeSeq(), corrected: true });
    }
    this.finish('error');
  }

  /** Planning rounds: stream the model; if it calls tools, run them and plan again. */
  private async streamFromModel(): Promise<void> {
    for (let round = 0; round < MAX_TOOL_ROUNDS; round += 1) {
      const calls: ToolCallRequest[] = [];
      const messages = pairToolMessages(this.ctx.history.forModel(this.options.extraInstructions));
      const tokens = (this.tokens = new ModelTokens(messages));
      this.observation.mark('llmRequest');
      try {
        const stream = this.ctx.llm.stream({ messages, tools: this.ctx.tools(), toolChoice: this.ctx.toolChoice(round, this.options.afterUserTurn === true), temperature: this.ctx.settings.temperature, signal: this.abort.signal });
        for await (const event of stream) {
          tokens.note(event);
          if (this.finished) return;
          if (event.type !== 'finish') this.observation.mark('llmFirstToken');
          if (event.type === 'text') this.emitText(event.delta);
          // A call nested past the JSON bound could not be copied into the resume stash: dropped.
          else if (event.type === 'tool_call' && nestsTooDeep(event.call.args)) this.ctx.log.warn({ turn_id: this.turnId, tool: event.call.name }, 'dropped a tool call nested too deeply');
          else if (event.type === 'tool_call') {
            calls.push({ ...event.call, id: this.ctx.claimCallId(event.call.id) });
            this.ctx.meter.toolCalls(1);
          }
        }
      } finally {
        // Metered however the request ended: an interrupted one was paid for up to where it stopped.
        tokens.commit(this.ctx.meter, 'llm');
      }
      if (this.finished || calls.length === 0) return;
      this.ctx.history.fillAssistant(this.slot!, this.roundText, calls);
      // That slot now holds the call: an interruption while the tools run must not overwrite it.
      this.slot = undefined;
      // Result places sit right after the call (the model API wants them adjacent), whatever
      // is injected while the tools run.
      const resultSlots = calls.map(() => this.ctx.history.reserve());
      this.roundText = '';
      await this.setWorking(true);
      if (this.finished) {
        // Interrupted before the calls went out: none of them runs.
        calls.forEach((c, i) => this.ctx.history.fillToolResult(resultSlots[i]!, c.id, JSON.stringify({ outcome: 'cancelled', verified: false, content: 'not run: the user interrupted first' })));
        return;
      }
      const outcome = await this.runRound(calls, resultSlots);
      this.slot = this.ctx.history.reserve();
      if (this.finished) return;
      if (outcome.farewell !== undefined) {
        this.farewell = outcome.farewell;
        // SPEC: only the farewell is spoken as this turn's utterance.
        this.text = '';
        this.roundText = '';
        this.emitText(outcome.farewell);
        return;
      }
    }
    this.ctx.log.warn({ turn_id: this.turnId }, `reply stopped after ${MAX_TOOL_ROUNDS} tool rounds`);
  }

  /** Runs one round's calls and records their results; `toolRound` resolves once they are recorded. */
  private async runRound(calls: ToolCallRequest[], resultSlots: HistorySlot[]): Promise<ToolRoundResult> {
    let roundDone!: () => void;
    this.toolRound = new Promise((resolve) => (roundDone = resolve));
    this.waitingOnTools = true;
    try {
      const outcome = await this.ctx.runTools(calls, this.abort.signal);
      // Results enter the history even when the turn was interrupted meanwhile: an answer that
      // arrived is never lost, and every tool call in the history has its result.
      outcome.results.forEach((r, i) => this.ctx.history.fillToolResult(resultSlots[i]!, r.call.id, r.content));
      return outcome;
    } finally {
      this.waitingOnTools = false;
      roundDone();
    }
  }

  /** SPEC: working=true while a tool-calling turn waits with nothing audible. */
  private async setWorking(active: boolean): Promise<void> {
    if (this.working === active) return;
    if (active) {
      await this.speech?.settle();
      if (this.finished) return;
    }
    this.working = active;
    this.ctx.send({ type: 'working', active });
  }

  private emitText(delta: string): void {
    if (this.finished || delta.length === 0) return;
    this.text += delta;
    this.roundText += delta;
    this.ctx.send({ type: 'text_delta', turn_id: this.turnId, delta });
    this.observation.mark('firstTextDelta');
    this.speech?.pushText(delta);
    if (this.working) void this.setWorking(false);
  }

  /** In voice, what the reply delivered is what was sent as audio; in text, what was written. */
  private deliveredText(): string {
    return this.speech ? this.speech.sentText : this.text;
  }

  private sendUtterance(): void {
    if (this.uttered) return;
    this.uttered = true;
    this.ctx.send({ type: 'utterance', text: this.text, turn_id: this.turnId, barge_seq: this.ctx.bargeSeq(), corrected: false });
  }

  private finish(status: TurnStatus): void {
    if (this.finished) return;
    this.finished = true;
    this.abort.abort(TURN_OVER);
    const delivered = status === 'completed' ? this.text : this.deliveredText();
    if (!this.uttered && delivered.length > 0 && status !== 'canceled') {
      this.uttered = true;
      this.ctx.send({ type: 'utterance', text: delivered, turn_id: this.turnId, barge_seq: this.ctx.bargeSeq(), corrected: false });
    }
    const preToolChars = this.text.length - this.roundText.length;
    const finalText = status === 'completed' ? this.roundText : delivered.slice(Math.min(delivered.length, preToolChars));
    const historySlot = this.slot ?? this.ctx.history.reserve();
    if (historySlot) this.ctx.history.fillAssistant(historySlot, status === 'canceled' ? '' : this.farewell ?? finalText);
    if (this.working) {
      this.working = false;
      this.ctx.send({ type: 'working', active: false });
    }
    this.options.beforeDone?.(status, delivered);
    this.tokens?.commit(this.ctx.meter, 'llm');
    const metrics = this.observation.metrics();
    this.ctx.send({ type: 'done', turn_id: this.turnId, status, usage: this.ctx.meter.closeTurn(this.turnId, this.speech?.sentMs ?? 0), metrics });
    this.observation.end({ turnId: this.turnId, status, modality: this.ctx.settings.modality, metrics });
    this.resolveDone({ turnId: this.turnId, status, speech: this.speech, historySlot, farewell: status === 'completed' ? this.farewell : undefined, metrics });
  }
}
