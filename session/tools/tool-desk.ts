import type { ClientFrameOf } from '../protocol/client.ts';
import type { ToolChoice } from '../protocol/common.ts';
import type { ServerFrame } from '../protocol/server.ts';
import type { ConversationHistory } from '../history.ts';
import type { LanguageModel, ModelTool, ModelToolChoice, ToolCallRequest } from '../providers/llm.ts';
import type { WebSearch } from '../providers/search.ts';
import type { SessionSettings } from '../settings.ts';
import type { TurnStatus } from '../turn-contract.ts';
import { CompletionQueue } from './completion-queue.ts';
import type { ToolErrorCode } from '../protocol/errors.ts';
import { Interactions } from './interactions/interactions.ts';
import type { NarrationTurn } from './interactions/narration-queue.ts';
import { interactionTiming, type InteractionConfig } from './interactions/timing.ts';
import { Permissions } from './permissions.ts';
import { ToolCalls } from './tool-calls.ts';
import type { DeferredJob } from './call-records.ts';
import { DeepThoughts } from './deep-thoughts.ts';
import { runToolRound } from './tool-round.ts';
import type { ServerToolSet } from './server-tool.ts';
import { choiceForRound, visibleTools } from './tool-set.ts';
import { describeResolution, type ToolOutcome, type ToolResolution, type ToolRoundResult } from './types.ts';

export interface ToolDeskOptions {
  defaultTimeoutMs: number;
  deferredTimeoutMs: number;
  permissionTimeoutMs: number;
  deepModel: string | undefined;
  /** INTERACTION_QUEUE_DEADLINE_S/_ROUNDS from the server's Config; read from the environment when absent. */
  interactions: InteractionConfig;
  /** Server-side tools, and the session they run for (their context names it). */
  server?: { tools: ServerToolSet; session: { id: string; account: string } };
}

export interface ToolDeskHost {
  readonly settings: SessionSettings;
  readonly history: ConversationHistory;
  readonly llm: LanguageModel;
  readonly search: WebSearch | undefined;
  send(frame: ServerFrame): void;
  floorFree(): boolean;
  narrate(instruction: string, beforeDone: (status: TurnStatus, delivered: string) => void): NarrationTurn;
  /** The reply in flight waits on this call: it yields the floor (resolves once its results are recorded). */
  yieldFor(callId: string): Promise<void> | undefined;
  /** A partial result asked for a reply now (skipped when another reply is in flight). */
  replyNow(instruction: string): void;
  /** A tool call ended for good (metrics). */
  toolCallEnded(outcome: ToolOutcome): void;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

const PARTIAL_REPLY = 'A tool just reported a partial result (see the latest context). Tell the user briefly.';

/**
 * A session's tool side: client calls, permissions, deferred jobs and their voiceovers,
 * managed tools and tool choice. The turn runner asks it for the tool list and hands it each
 * round's calls; client frames about tools land here.
 */
export class ToolDesk {
  readonly calls: ToolCalls;
  readonly permissions: Permissions;
  readonly completions: CompletionQueue;
  readonly interactions: Interactions;
  private readonly thoughts: DeepThoughts;
  /** The choice to restore after a one-shot set_tool_choice has been used. */
  private revertTo: ToolChoice | undefined;
  /** A one-shot choice taken by the current user turn: it holds for every round of that turn. */
  private oneShot: ToolChoice | undefined;

  constructor(
    private readonly host: ToolDeskHost,
    private readonly options: ToolDeskOptions,
  ) {
    this.calls = new ToolCalls({
      send: (frame) => host.send(frame),
      note: (text) => host.history.addContext(text),
      deferredTimeoutMs: options.deferredTimeoutMs,
      lateResult: (call, resolution) => this.onLateResult(call, resolution),
      jobEnded: (job, resolution) => this.onJobEnded(job, resolution),
      ended: (callId, how, outcome) => {
        host.toolCallEnded(outcome);
        this.interactions.callEnded(callId, how);
      },
    });
    this.permissions = new Permissions((frame) => host.send(frame), options.permissionTimeoutMs);
    this.interactions = new Interactions(
      {
        floorFree: () => host.floorFree(),
        yieldFor: (callId) => host.yieldFor(callId),
        narrate: (instruction, beforeDone) => host.narrate(instruction, beforeDone),
        send: (frame) => host.send(frame),
        note: (text) => host.history.addContext(text),
        log: host.log,
        calls: this.calls,
        clientTools: () => host.settings.tools,
        defaultTimeoutMs: options.defaultTimeoutMs,
        cancelCall: (callId) => this.calls.cancelFromServer(callId, 'cancelled'),
      },
      interactionTiming(options.interactions),
    );
    this.completions = new CompletionQueue({
      // Interaction asks go first: job voiceovers wait while any is queued or being spoken.
      floorFree: () => host.floorFree() && !this.interactions.busy,
      narrate: (instruction, beforeDone) => host.narrate(instruction, beforeDone),
      send: (frame) => host.send(frame),
    });
    const { settings, history, llm } = host;
    this.thoughts = new DeepThoughts({ settings, history, llm, deepModel: options.deepModel, completions: this.completions });
  }

  tools(): ModelTool[] {
    const s = this.host.settings;
    return visibleTools({
      clientTools: s.tools, serverTools: this.options.server?.tools.modelTools(), webSearch: s.webSearch, endCall: s.endCall, jobsRunning: this.calls.jobs().length + this.thoughts.size > 0,
      transition: this.interactions.tool(),
    });
  }

  serverToolNames(): string[] {
    return this.options.server?.tools.names() ?? [];
  }

  /**
   * Called for every planning round of the one reply in flight, round 0 first; a round 0 is a
   * new reply, so a one-shot choice lasts from the user turn's round 0 up to the next round 0.
   */
  toolChoice(round: number, afterUserTurn: boolean): ModelToolChoice {
    if (round === 0) this.oneShot = undefined;
    if (round === 0 && afterUserTurn && this.revertTo !== undefined) {
      // one_shot: this user turn uses it (all its rounds); the next one gets the earlier choice back.
      this.oneShot = this.host.settings.toolChoice;
      this.host.settings.toolChoice = this.revertTo;
      this.revertTo = undefined;
    }
    // SPEC: once a question was voiced, every later user turn opens with interaction_transition
    // until the decision is settled; this outranks mode.tool_choice.
    if (round === 0 && afterUserTurn && this.interactions.decisionPending()) return { tool: 'interaction_transition' };
    return choiceForRound(this.oneShot ?? this.host.settings.toolChoice, round, afterUserTurn);
  }

  setToolChoice(frame: ClientFrameOf<'set_tool_choice'>): void {
    if (frame.one_shot) this.revertTo ??= this.host.settings.toolChoice;
    else this.revertTo = undefined;
    this.host.settings.toolChoice = frame.tool_choice;
  }

  runRound(calls: ToolCallRequest[], signal: AbortSignal): Promise<ToolRoundResult> {
    return runToolRound(
      {
        send: (frame) => this.host.send(frame),
        calls: this.calls,
        permissions: this.permissions,
        clientTools: () => this.host.settings.tools,
        server: this.options.server && {
          tools: this.options.server.tools,
          session: this.options.server.session,
          replyNow: () => this.host.replyNow(PARTIAL_REPLY),
          log: this.host.log,
        },
        managedEnabled: (name) => (name === 'web_search' ? this.host.settings.webSearch : name === 'end_call' ? this.host.settings.endCall : true),
        search: this.host.search,
        defaultTimeoutMs: this.options.defaultTimeoutMs,
        startDeepThought: (call) => this.thoughts.start(call),
        cancelJob: (jobId) => this.cancelJob(jobId),
        transition: (args, signal) => this.interactions.transition(args, signal),
        ended: (outcome) => this.host.toolCallEnded(outcome),
      },
      calls,
      signal,
    );
  }

  /** Handles a tool frame; returns an error to send, if any. */
  handle(
    frame: ClientFrameOf<'tool_result' | 'tool_cancel' | 'tool_deferred' | 'tool_progress' | 'tool_partial_result' | 'confirm_tool_permission'>,
  ): { code: ToolErrorCode; detail: string } | undefined {
    switch (frame.type) {
      case 'tool_result': {
        const r = this.calls.result(frame);
        return r === 'ok' ? undefined : { code: 'unknown_tool_call', detail: `tool_result for ${r === 'unknown' ? 'an unknown' : 'an already closed'} call "${frame.id}"; nothing changed` };
      }
      case 'tool_cancel': {
        const r = this.calls.cancelFromClient(frame.id);
        return r === 'ok' ? undefined : { code: 'unknown_tool_call', detail: `tool_cancel for ${r === 'unknown' ? 'an unknown' : 'an already closed'} call "${frame.id}"` };
      }
      case 'tool_deferred':
        this.host.send(this.calls.defer(frame));
        return undefined;
      case 'tool_progress': {
        const r = this.calls.progress(frame);
        return r === 'ok' ? undefined : { code: r, detail: `tool_progress for unknown or closed call "${frame.id}"` };
      }
      case 'tool_partial_result':
        return this.onPartial(frame);
      case 'confirm_tool_permission':
        return this.permissions.confirm(frame.approval_id, frame.approved)
          ? undefined
          : { code: 'unknown_approval', detail: `no pending permission with approval_id "${frame.approval_id}"` };
    }
  }

  /** tool_interaction_update → tool_interaction_update_ack (always). */
  updateInteraction(frame: ClientFrameOf<'tool_interaction_update'>): ServerFrame {
    return this.interactions.update(frame, this.calls.canonicalId(frame.id));
  }

  /** The floor may be free: interaction asks first, then job voiceovers. */
  pumpDeliveries(): void {
    this.interactions.pump();
    this.completions.pump();
  }

  /** set_tools replaced the declared tools: open resolver bindings are re-validated. */
  toolsChanged(): void {
    this.interactions.revalidate(this.host.settings.tools);
  }

  close(): void {
    this.interactions.dispose();
    this.calls.close();
    this.permissions.close();
    this.thoughts.close();
  }

  private onPartial(frame: ClientFrameOf<'tool_partial_result'>): { code: ToolErrorCode; detail: string } | undefined {
    const live = this.calls.live(frame.id);
    // An invalid interaction is refused before anything is recorded: the frame changes nothing.
    const checked = live && frame.interaction ? this.interactions.check(frame.interaction) : undefined;
    if (checked && !checked.ok) return { code: 'invalid_interaction', detail: `${checked.detail}; nothing changed` };
    const r = this.calls.partial(frame);
    if (r === 'partial_limit') return { code: r, detail: `at most 8 partial results per call; call "${frame.id}" has had them all` };
    if (r === 'partial_too_large') return { code: r, detail: 'partial result content is over 2 KiB as JSON' };
    if (r !== 'ok') return { code: r, detail: `tool_partial_result for unknown or closed call "${frame.id}"` };
    // SPEC: reply is ignored when an interaction is given.
    if (live && frame.interaction && checked?.ok) this.interactions.raise(live, frame.interaction, checked);
    else if (frame.reply) this.host.replyNow(PARTIAL_REPLY);
    return undefined;
  }

  private onLateResult(call: ToolCallRequest, resolution: ToolResolution): void {
    this.interactions.resolverEnded(call.id, resolution);
    // The turn that asked has moved on (the user interrupted, or it yielded to the call's own
    // question): the result enters the context and is told when the floor is free, so nothing
    // that arrived is lost.
    this.host.history.addContext(`Result of ${call.name} (call ${call.id}) arrived after its turn had moved on: ${describeResolution(resolution)}`);
    this.completions.push([call.id], `The result of ${call.name} arrived (see context). Tell the user briefly and honestly.`);
  }

  private onJobEnded(job: DeferredJob, resolution: ToolResolution): void {
    const what = resolution.outcome === 'timed_out' ? 'timed out' : resolution.outcome === 'cancelled' ? 'was cancelled' : 'finished';
    this.host.history.addContext(`Background job "${job.statusLabel}" (${job.jobId}, ${job.name}) ${what}: ${describeResolution(resolution)}`);
    this.completions.push([job.jobId], `The background job "${job.statusLabel}" ${what} (see context). Tell the user briefly and honestly.`);
  }

  private cancelJob(jobId: string | undefined): ToolResolution {
    const jobs = this.calls.jobs();
    const thought = this.thoughts.cancel(jobId, jobs.length);
    if (thought) return thought;
    const job = jobId ? jobs.find((j) => j.jobId === jobId || j.handle === jobId) : jobs[jobs.length - 1];
    if (!job) return { outcome: 'failed', verified: false, content: 'no such running job' };
    this.calls.cancelFromServer(job.callId, 'cancelled');
    return { outcome: 'succeeded', verified: true, content: `asked the host to cancel ${job.jobId}` };
  }
}
