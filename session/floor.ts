import type { ServerFrame } from './protocol/server.ts';
import type { ConversationHistory } from './history.ts';
import type { LanguageModel } from './providers/llm.ts';
import type { SessionSettings } from './settings.ts';
import type { NarrationTurn } from './tools/interactions/narration-queue.ts';
import type { ToolDesk } from './tools/tool-desk.ts';
import { newTurnId } from './ids.ts';
import type { TurnContext, TurnOptions, TurnRecord, TurnStatus } from './turn-contract.ts';
import { TurnRunner } from './turn-runner.ts';
import type { SpeechOutput } from './voice/speech-output.ts';
import type { SessionObserver } from './observer.ts';
import { TurnObservation } from './turn-observation.ts';

export interface FloorParts {
  send(frame: ServerFrame): void;
  llm: LanguageModel;
  history: ConversationHistory;
  settings: SessionSettings;
  speech: SpeechOutput | undefined;
  /** Every reply plans with the desk's tools and hands it each round's calls. */
  desk: ToolDesk;
  log: TurnContext['log'];
  meter: TurnContext['meter'];
  observer: SessionObserver;
  /** A reply the floor stopped has finished: its record serves a later playback report. */
  stopped(record: TurnRecord, bargeSeq: number): void;
  /** Any reply has finished. */
  finished(record: TurnRecord): void;
}

/**
 * The turn-taking rule: at most one assistant reply is in flight. Starting a reply takes the
 * floor; stopping it bumps the barge sequence that stamps the interrupted utterance.
 */
export class Floor {
  private readonly context: TurnContext;
  private current: TurnRunner | undefined;
  private seq = 0;

  constructor(private readonly parts: FloorParts) {
    const { desk } = parts;
    this.context = {
      send: parts.send,
      llm: parts.llm,
      history: parts.history,
      settings: parts.settings,
      speech: parts.speech,
      bargeSeq: () => this.seq,
      tools: () => desk.tools(),
      toolChoice: (round, afterUserTurn) => desk.toolChoice(round, afterUserTurn),
      runTools: (calls, signal) => desk.runRound(calls, signal),
      claimCallId: (modelId) => desk.calls.claimId(modelId),
      meter: parts.meter,
      observe: () => new TurnObservation(parts.observer.openTurn()),
      log: parts.log,
    };
  }

  get replying(): boolean {
    return this.current?.active === true;
  }

  get bargeSeq(): number {
    return this.seq;
  }

  /** Resume: the sequence goes on from the stashed conversation. */
  restoreBargeSeq(seq: number): void {
    this.seq = seq;
  }

  start(options: TurnOptions): TurnRunner {
    const runner = new TurnRunner(this.context, options);
    this.current = runner;
    void runner.start();
    void runner.done.then((record) => this.parts.finished(record));
    return runner;
  }

  /** A voiceover reply (an interaction ask, a job's narration) that its owner may stop. */
  narrate(instruction: string, beforeDone: (status: TurnStatus, delivered: string) => void): NarrationTurn {
    const runner = this.start({ turnId: newTurnId(), extraInstructions: instruction, beforeDone });
    return { stop: () => this.stop(runner) };
  }

  /**
   * Stops this reply (default: the one in flight) if it still holds the floor (interrupted, done).
   * `speechOnsetAt`: a barge-in, by speech that began then.
   */
  stop(runner: TurnRunner | undefined = this.current, speechOnsetAt?: number): void {
    if (!runner?.active || runner !== this.current) return;
    this.seq += 1;
    const seq = this.seq;
    runner.interrupt(seq, speechOnsetAt);
    void runner.done.then((record) => this.parts.stopped(record, seq));
  }

  /** The reply in flight ends its turn early so a question can be voiced; undefined when none is in flight. */
  yieldCurrent(): Promise<void> | undefined {
    return this.current?.active ? this.current.yieldFloor() : undefined;
  }

  /** Runs `then` once the reply in flight has finished, or at once when none is. */
  afterCurrent(then: () => void): void {
    if (this.current?.active) void this.current.done.then(then);
    else then();
  }

  /**
   * The connection is going: the reply in flight stops where it is, without a new barge
   * sequence. Resolves once its work has stopped (an interrupted tool round's results recorded).
   */
  halt(): Promise<void> {
    const current = this.current;
    current?.interrupt(this.seq);
    return current?.settled ?? Promise.resolve();
  }
}
