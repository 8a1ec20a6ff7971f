import type { ClientFrameOf } from '../../protocol/client.ts';
import type { ServerFrameOf } from '../../protocol/server.ts';
import type { ToolDeclaration } from '../../protocol/tools.ts';
import type { ModelTool, ToolCallRequest } from '../../providers/llm.ts';
import type { DeferredJob } from '../call-records.ts';
import type { ToolResolution } from '../types.ts';
import { CLOSE_STATES, MAX_INTERACTION_ID, type Ask, type CloseState, type InteractionInput } from './interaction.ts';
import { InteractionRegistry } from './interaction-registry.ts';
import { NarrationQueue, type NarrationHost, type NarrationTiming } from './narration-queue.ts';
import { liveBinding, resolverArgs, runResolver, type ResolverDeps } from './resolver.ts';
import { matchOption, parseTransitionArgs, transitionTool, type TransitionArgs } from './transition-tool.ts';
import { bindingProblem, checkInteraction, type InteractionCheck } from './validate-interaction.ts';

export interface InteractionHost extends NarrationHost, ResolverDeps {
  /** The server gives up on a call (interaction_transition cancel): tool_cancel to the host. */
  cancelCall(callId: string): void;
}

type Ack = ServerFrameOf<'tool_interaction_update_ack'>;

/**
 * Questions raised by tools (SPEC "Interaction", "Interaction narration states", "Interaction
 * close"): raising and validation, the narration queue, the model's interaction_transition,
 * resolver bindings, and tool_interaction_update. Per connection only: nothing here is part of
 * the resume snapshot.
 */
export class Interactions {
  private readonly registry = new InteractionRegistry();
  private readonly queue: NarrationQueue;

  constructor(
    private readonly host: InteractionHost,
    timing: NarrationTiming,
  ) {
    this.queue = new NarrationQueue(host, timing);
  }

  /** Asks wait for or hold the floor: job voiceovers come after them. */
  get busy(): boolean {
    return this.queue.busy;
  }

  /** Validation that changes nothing (run before the partial is recorded). */
  check(interaction: InteractionInput): InteractionCheck {
    return checkInteraction(interaction, (id) => this.registry.used(id), this.host.clientTools());
  }

  /** A checked interaction on a live call: supersede the call's older ask, then voice or queue it. */
  raise(call: { request: ToolCallRequest; job: DeferredJob | undefined }, interaction: InteractionInput, checked: Extract<InteractionCheck, { ok: true }>): Ask {
    const callId = call.request.id;
    const id = interaction.id ?? this.registry.deriveId(callId);
    for (const older of this.registry.openOn(callId)) this.close(older, 'superseded', `a newer question from ${call.request.name} replaced it`);
    const ask: Ask = {
      id, callId, jobId: call.job?.jobId ?? callId, toolName: call.request.name, prompt: interaction.prompt, options: interaction.options,
      binding: checked.binding, narration: undefined, voiced: false, decided: false, resolving: undefined, closed: undefined,
      attempts: 0, rounds: 0, watchdog: undefined,
    };
    this.registry.add(ask);
    if (checked.dropped) this.host.log.warn({ interaction_id: id, why: checked.dropped }, 'resolver binding dropped; the ask stands');
    const choices = ask.options ? ` Options: ${ask.options.join('; ')}.` : ' The user answers in their own words.';
    this.host.note(`${ask.toolName} (call ${callId}) needs a decision from the user, interaction ${id}: "${ask.prompt}".${choices}`);
    this.queue.submit(ask);
    return ask;
  }

  /** The call behind asks ended: a terminal result resolves them, a cancel or timeout cancels them. */
  callEnded(callId: string, how: 'resolved' | 'cancelled'): void {
    for (const ask of this.registry.openOn(callId)) this.close(ask, how, how === 'resolved' ? 'its tool call sent its result' : 'its tool call was cancelled');
  }

  /** tool_interaction_update → its ack, always. Checks in order: id form, state, known, open. */
  update(frame: ClientFrameOf<'tool_interaction_update'>, callId: string | undefined): Ack {
    const wellFormed = frame.interaction_id.length > 0 && frame.interaction_id.length <= MAX_INTERACTION_ID;
    const stateOk = CLOSE_STATES.includes(frame.state);
    const ack = (applied: boolean, reason: Ack['reason']): Ack => ({
      type: 'tool_interaction_update_ack', id: callId ?? null, interaction_id: wellFormed ? frame.interaction_id : null,
      state: stateOk ? frame.state : null, applied, reason,
    });
    if (!wellFormed) return ack(false, 'invalid_interaction_id');
    if (!stateOk) return ack(false, 'invalid_state');
    const ask = this.registry.get(frame.interaction_id);
    if (!ask || ask.callId !== callId) return ack(false, 'unknown_interaction');
    if (ask.closed) return ack(false, 'already_closed');
    this.close(ask, frame.state as CloseState, `by the application${frame.note ? ` (${frame.note})` : ''}`);
    return ack(true, null);
  }

  /** A real user turn or barge is taking the floor. */
  userTookFloor(): void {
    this.queue.userTookFloor();
  }

  pump(): void {
    this.queue.pump();
  }

  /** set_tools: bindings whose tool vanished or became ineligible are dropped; the asks stand. */
  revalidate(tools: readonly ToolDeclaration[]): void {
    for (const ask of this.registry.all()) {
      if (ask.closed || !ask.binding) continue;
      const problem = bindingProblem(ask.binding, tools);
      if (!problem) continue;
      ask.binding = undefined;
      this.host.log.warn({ interaction_id: ask.id, why: problem }, 'resolver binding dropped by set_tools; the ask stands');
    }
  }

  /** reset: a fresh conversation; open asks leave it (their narration is superseded), decisions stay open for the host. */
  reset(): void {
    const all = this.registry.all();
    for (const ask of all) if (!ask.closed) ask.decided = true;
    this.queue.supersedeAll(all);
  }

  dispose(): void {
    this.queue.dispose();
  }

  /** A voiced question awaits the user's decision: user turns open with interaction_transition. */
  decisionPending(): boolean {
    return this.registry.pendingDecisions().length > 0;
  }

  /** The managed interaction_transition tool, offered only while a voiced decision is open. */
  tool(): ModelTool | undefined {
    const open = this.registry.pendingDecisions();
    return open.length > 0 ? transitionTool(open) : undefined;
  }

  /** interaction_transition: what the model is told back. */
  async transition(rawArgs: Record<string, unknown>, signal: AbortSignal): Promise<ToolResolution> {
    const args = parseTransitionArgs(rawArgs);
    const failed = (content: unknown): ToolResolution => ({ outcome: 'failed', verified: false, content });
    const done = (content: unknown): ToolResolution => ({ outcome: 'succeeded', verified: true, content });
    if (!args.action) return failed('action must be one of resolve, clarify, supersede, cancel');
    const ask = args.interactionId ? this.registry.get(args.interactionId) : this.registry.pendingDecisions().at(-1);
    if (!ask) return failed(args.interactionId ? `there is no interaction ${args.interactionId}` : 'no question is waiting for a decision');
    if (ask.closed) return failed(`interaction ${ask.id} is already closed (${ask.closed}); there is nothing to decide`);
    if (ask.resolving) return failed(`interaction ${ask.id} is being resolved already; its result will be reported`);
    const base = { interaction_id: ask.id, action: args.action };
    switch (args.action) {
      case 'clarify':
        return done({ ...base, status: 'still open', next: args.message ? `ask the user: ${args.message}` : 'ask the user to clarify their answer' });
      case 'supersede':
        ask.decided = true;
        this.host.note(`The user moved on from interaction ${ask.id} ("${ask.prompt}"); it is no longer being decided in the conversation.`);
        return done({ ...base, status: 'superseded in the conversation; the application may raise a new question' });
      case 'cancel':
        ask.decided = true;
        this.host.cancelCall(ask.callId);
        return done({ ...base, status: `cancelled: ${ask.toolName} (call ${ask.callId}) was told to stop` });
      case 'resolve':
        return this.resolve(ask, args, signal);
    }
  }

  /** A resolver call's result came after its turn stopped waiting: it settles or reopens the ask. */
  resolverEnded(callId: string, resolution: ToolResolution): void {
    const ask = this.registry.all().find((a) => a.resolving === callId);
    if (!ask) return;
    ask.resolving = undefined;
    if (settles(resolution)) ask.decided = true;
    else this.host.note(`The resolver of interaction ${ask.id} ended ${resolution.outcome}; the question is still open and can be resolved again.`);
  }

  private async resolve(ask: Ask, args: TransitionArgs, signal: AbortSignal): Promise<ToolResolution> {
    const base = { interaction_id: ask.id, action: 'resolve' as const };
    let decision: { choice?: string; answer?: string };
    if (ask.options) {
      const choice = matchOption(ask.options, args.choice) ?? matchOption(ask.options, args.answer);
      if (!choice) return { outcome: 'failed', verified: false, content: { ...base, rejected: true, reason: 'invalid_choice', detail: `choice must be one of: ${ask.options.join('; ')}; the question is still open` } };
      decision = { choice };
    } else {
      const answer = args.answer ?? args.choice;
      if (!answer) return { outcome: 'failed', verified: false, content: { ...base, rejected: true, reason: 'missing_answer', detail: "resolve needs the user's answer in `answer`; the question is still open" } };
      decision = { answer };
    }
    const said = decision.choice ?? decision.answer!;
    const binding = liveBinding(ask, this.host.clientTools());
    if (!binding) {
      ask.decided = true;
      this.host.note(`The user's decision on interaction ${ask.id} ("${ask.prompt}"): ${said}.`);
      return { outcome: 'succeeded', verified: false, content: { ...base, ...decision, status: 'recorded; the tool that asked acts on it' } };
    }
    let resolverId = '';
    const resolution = await runResolver(this.host, binding, resolverArgs(binding, decision), signal, (request) => {
      resolverId = request.id;
      ask.resolving = request.id;
    });
    const resolver = { tool: binding.tool, call_id: resolverId, outcome: resolution.outcome, content: resolution.content };
    if (signal.aborted && ask.resolving === resolverId) {
      // The turn stopped waiting: the late result settles or reopens the ask (resolverEnded).
      return { outcome: 'unknown', verified: false, content: { ...base, ...decision, status: 'resolving; the result will be reported', resolver } };
    }
    if (ask.resolving === resolverId) ask.resolving = undefined;
    if (!settles(resolution)) {
      return { outcome: 'failed', verified: false, content: { ...base, ...decision, status: 'still open', retryable: true, detail: `the resolver ${binding.tool} ended ${resolution.outcome}; the question is still open and resolve can be retried`, resolver } };
    }
    ask.decided = true;
    this.host.note(`The user's decision on interaction ${ask.id} ("${ask.prompt}"): ${said}; ${binding.tool} ran with it.`);
    return { outcome: resolution.outcome, verified: resolution.verified, content: { ...base, ...decision, status: 'resolved', resolver } };
  }

  private close(ask: Ask, state: CloseState, why: string): void {
    if (ask.closed) return;
    ask.closed = state;
    this.queue.close(ask, state);
    this.host.note(`Interaction ${ask.id} ("${ask.prompt}") is closed (${state}): ${why}. The decision is no longer open; do not ask it again.`);
  }
}

/** A failed, timed-out or cancelled resolver keeps the ask open; anything else settles it. */
function settles(resolution: ToolResolution): boolean {
  return resolution.outcome !== 'failed' && resolution.outcome !== 'timed_out' && resolution.outcome !== 'cancelled';
}
