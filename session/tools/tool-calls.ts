import type { ServerFrame } from '../protocol/server.ts';
import type { ClientFrameOf } from '../protocol/client.ts';
import { randomId } from '../ids.ts';
import type { ToolCallRequest } from '../providers/llm.ts';
import type { ToolErrorCode } from '../protocol/errors.ts';
import type { ToolResolution } from './types.ts';
import { LIMITS } from '../protocol/limits.ts';

export const MAX_PARTIALS_PER_CALL = LIMITS.partialsPerCall;

/**
 * Abort reason of a turn that yields the floor to an ask raised by a call it waits on: the
 * calls it waited on are answered "still running" without claiming the user interrupted.
 */
export const FLOOR_YIELD = 'floor_yield_for_interaction';
export const MAX_PARTIAL_BYTES = LIMITS.partialBytes;
/** Closed call ids a resume snapshot carries (the newest ones). */
const MAX_CLOSED_IDS_KEPT = 256;

export interface DeferredJob {
  jobId: string;
  callId: string;
  handle: string;
  name: string;
  statusLabel: string;
  deadline: number;
}

type CallState = 'open' | 'resolved' | 'deferred' | 'cancelled';

interface Call {
  request: ToolCallRequest;
  state: CallState;
  deferrable: boolean;
  partials: number;
  timer: NodeJS.Timeout | undefined;
  /** The turn waiting on this call; cleared when that turn was interrupted. */
  waiter: ((resolution: ToolResolution) => void) | undefined;
  job: DeferredJob | undefined;
}

export interface ToolCallHooks {
  send(frame: ServerFrame): void;
  /** A result arrived after its turn stopped waiting (interrupted): record it, maybe narrate. */
  lateResult(call: ToolCallRequest, resolution: ToolResolution): void;
  /** A deferred job ended (result, host cancel or timeout). */
  jobEnded(job: DeferredJob, resolution: ToolResolution): void;
  /** Context notes (progress, partials) for the model. */
  note(text: string): void;
  /** A call closed for good: its terminal result ('resolved'), or a cancel or timeout from either side. */
  ended?(callId: string, how: 'resolved' | 'cancelled', outcome: ToolResolution['outcome']): void;
  deferredTimeoutMs: number;
}

/**
 * Every client tool call of a session and its state (SPEC "Tool call" table). A call resolves
 * exactly once, whatever arrives first: result, cancel from either side, or timeout; a result
 * that arrives while no turn waits is never dropped.
 */
export class ToolCalls {
  private readonly calls = new Map<string, Call>();
  /** Every call id this session has used, so a model that reuses ids never overwrites a call. */
  private readonly usedIds = new Set<string>();

  /** The model's id when it is new in this session, else a fresh one derived from it. */
  claimId(modelId: string): string {
    let id = modelId;
    for (let n = 2; this.usedIds.has(id) || this.calls.has(id); n += 1) id = `${modelId}~${n}`;
    this.usedIds.add(id);
    return id;
  }
  private readonly byHandle = new Map<string, string>();

  constructor(private readonly hooks: ToolCallHooks) {}

  /** Sends tool_call and resolves when the call ends or the turn stops waiting (`signal`). */
  run(request: ToolCallRequest, options: { timeoutMs: number; deferrable: boolean }, signal: AbortSignal): Promise<ToolResolution> {
    const call: Call = { request, state: 'open', deferrable: options.deferrable, partials: 0, timer: undefined, waiter: undefined, job: undefined };
    this.calls.set(request.id, call);
    return new Promise((resolve) => {
      call.waiter = resolve;
      call.timer = setTimeout(() => this.cancelFromServer(request.id, 'timed_out'), options.timeoutMs);
      this.hooks.send({ type: 'tool_call', id: request.id, name: request.name, args: request.args });
      const detach = (): void => {
        if (call.waiter !== resolve) return;
        call.waiter = undefined;
        const content = signal.reason === FLOOR_YIELD
          ? 'still running: it asked the user a question (see the context), which is being put to the user now; its result will be reported when it arrives'
          : 'the user interrupted; this call is still running and its result will be reported when it arrives';
        resolve({ outcome: 'unknown', verified: false, content });
      };
      if (signal.aborted) detach();
      else signal.addEventListener('abort', detach, { once: true });
    });
  }

  /** tool_result: 'ok', or why it changed nothing. */
  result(frame: ClientFrameOf<'tool_result'>): 'ok' | 'unknown' | 'closed' {
    const call = this.calls.get(frame.id);
    if (!call) return 'unknown';
    if (call.state === 'resolved' || call.state === 'cancelled') return 'closed';
    const resolution: ToolResolution = {
      outcome: frame.outcome,
      verified: frame.outcome === 'succeeded' && frame.verified,
      content: frame.content,
    };
    this.settle(call, 'resolved', resolution);
    return 'ok';
  }

  /** The host cancelled a call it was running (tool_cancel from the client). */
  cancelFromClient(id: string): 'ok' | 'unknown' | 'closed' {
    const call = this.calls.get(id) ?? this.calls.get(this.byHandle.get(id) ?? '');
    if (!call) return 'unknown';
    if (call.state === 'resolved' || call.state === 'cancelled') return 'closed';
    this.settle(call, 'cancelled', { outcome: 'cancelled', verified: false, content: 'the host cancelled this call' });
    return 'ok';
  }

  /** The server gives up on a call (timeout, cancel_pending_job): the host gets tool_cancel. */
  cancelFromServer(id: string, outcome: 'timed_out' | 'cancelled'): boolean {
    const call = this.calls.get(id);
    if (!call || (call.state !== 'open' && call.state !== 'deferred')) return false;
    this.hooks.send({ type: 'tool_cancel', id });
    const content = outcome === 'timed_out' ? 'the call timed out before the host answered' : 'cancelled at the user\'s request';
    this.settle(call, 'cancelled', { outcome, verified: false, content });
    return true;
  }

  /** tool_deferred → the ack's fields. Eligible: declared deferrable, still open, not deferred. */
  defer(frame: ClientFrameOf<'tool_deferred'>): ServerFrame {
    const call = this.calls.get(frame.id);
    const refuse = (reason: string): ServerFrame => ({ type: 'tool_deferred_ack', accepted: false, id: frame.id, handle: frame.handle, reason });
    if (!call) return refuse('unknown_call');
    if (call.state === 'deferred') return refuse('already_deferred');
    if (call.state !== 'open') return refuse('call_closed');
    if (!call.deferrable) return refuse('not_deferrable');
    if (this.byHandle.has(frame.handle)) return refuse('duplicate_handle');
    const timeoutMs = this.hooks.deferredTimeoutMs;
    const job: DeferredJob = {
      jobId: randomId('job', 6),
      callId: call.request.id,
      handle: frame.handle,
      name: call.request.name,
      statusLabel: frame.status_label ?? call.request.name,
      deadline: Date.now() + timeoutMs,
    };
    call.state = 'deferred';
    call.job = job;
    this.byHandle.set(frame.handle, call.request.id);
    clearTimeout(call.timer);
    call.timer = setTimeout(() => this.cancelFromServer(call.request.id, 'timed_out'), timeoutMs);
    // The turn moves on at once: it is told a job now runs in the background.
    const waiter = call.waiter;
    call.waiter = undefined;
    waiter?.({ outcome: 'unknown', verified: false, content: { status: 'running in the background', job_id: job.jobId, status_label: job.statusLabel } });
    return {
      type: 'tool_deferred_ack', accepted: true, id: call.request.id, handle: job.handle, job_id: job.jobId,
      status_label: job.statusLabel, deferred_timeout: timeoutMs / 1000,
    };
  }

  progress(frame: ClientFrameOf<'tool_progress'>): 'ok' | ToolErrorCode {
    const call = this.live(frame.id);
    if (!call) return 'unknown_tool_call';
    this.hooks.note(`Progress on ${call.request.name} (call ${call.request.id}): ${frame.note}`);
    return 'ok';
  }

  partial(frame: ClientFrameOf<'tool_partial_result'>): 'ok' | ToolErrorCode {
    const call = this.liveCall(frame.id);
    if (!call) return 'unknown_tool_call';
    if (Buffer.byteLength(JSON.stringify(frame.content)) > MAX_PARTIAL_BYTES) return 'partial_too_large';
    if (call.partials >= MAX_PARTIALS_PER_CALL) return 'partial_limit';
    call.partials += 1;
    this.hooks.note(`Partial result ${call.partials} from ${call.request.name} (call ${call.request.id}): ${JSON.stringify(frame.content)}`);
    return 'ok';
  }

  /** The call behind an id or a deferred handle, while it can still change. */
  live(idOrHandle: string): { request: ToolCallRequest; job: DeferredJob | undefined } | undefined {
    const call = this.liveCall(idOrHandle);
    return call ? { request: call.request, job: call.job } : undefined;
  }

  private liveCall(idOrHandle: string): Call | undefined {
    const call = this.calls.get(idOrHandle) ?? this.calls.get(this.byHandle.get(idOrHandle) ?? '');
    return call && (call.state === 'open' || call.state === 'deferred') ? call : undefined;
  }

  /** A turn is blocked waiting on this call's result. */
  awaited(id: string): boolean {
    return this.calls.get(id)?.waiter !== undefined;
  }

  /** The call id behind an id or a deferred handle, whatever the call's state; undefined if never seen. */
  canonicalId(idOrHandle: string): string | undefined {
    if (this.calls.has(idOrHandle)) return idOrHandle;
    const byHandle = this.byHandle.get(idOrHandle);
    return byHandle !== undefined && this.calls.has(byHandle) ? byHandle : undefined;
  }

  jobs(): DeferredJob[] {
    return [...this.calls.values()].filter((c) => c.state === 'deferred' && c.job).map((c) => c.job!);
  }

  /** Calls still open or deferred, for the resume stash. */
  pending(): { request: ToolCallRequest; job: DeferredJob | undefined; deferrable: boolean }[] {
    return [...this.calls.values()]
      .filter((c) => c.state === 'open' || c.state === 'deferred')
      .map((c) => ({ request: c.request, job: c.job, deferrable: c.deferrable }));
  }

  /**
   * Ids of the latest calls that are closed (resolved or cancelled), for the resume stash: after
   * a resume, a result re-sent for one of them is recognised as already answered.
   */
  closedIds(limit = MAX_CLOSED_IDS_KEPT): string[] {
    const closed: string[] = [];
    for (const [id, call] of this.calls) if (call.state === 'resolved' || call.state === 'cancelled') closed.push(id);
    return closed.slice(-limit);
  }

  /** A resumed session's closed calls: known, answered, never answered twice. */
  adoptClosed(ids: readonly string[]): void {
    for (const id of ids) {
      if (this.calls.has(id)) continue;
      this.usedIds.add(id);
      this.calls.set(id, {
        request: { id, name: '', args: {} }, state: 'resolved', deferrable: false, partials: 0, timer: undefined, waiter: undefined, job: undefined,
      });
    }
  }

  /** Re-adopts calls from a resumed session; their results are reported as late results. */
  adopt(entries: { request: ToolCallRequest; job: DeferredJob | undefined; deferrable: boolean }[], timeoutMs: number): void {
    for (const entry of entries) {
      const call: Call = {
        request: entry.request, state: entry.job ? 'deferred' : 'open', deferrable: entry.deferrable, partials: 0,
        timer: undefined, waiter: undefined, job: entry.job,
      };
      const left = entry.job ? Math.max(0, entry.job.deadline - Date.now()) : timeoutMs;
      call.timer = setTimeout(() => this.cancelFromServer(entry.request.id, 'timed_out'), left);
      this.calls.set(entry.request.id, call);
      this.usedIds.add(entry.request.id);
      if (entry.job) this.byHandle.set(entry.job.handle, entry.request.id);
    }
  }

  close(): void {
    for (const call of this.calls.values()) clearTimeout(call.timer);
  }

  private settle(call: Call, state: CallState, resolution: ToolResolution): void {
    clearTimeout(call.timer);
    const wasDeferred = call.state === 'deferred';
    call.state = state;
    const waiter = call.waiter;
    call.waiter = undefined;
    this.hooks.ended?.(call.request.id, state === 'resolved' ? 'resolved' : 'cancelled', resolution.outcome);
    if (waiter) waiter(resolution);
    else if (wasDeferred && call.job) this.hooks.jobEnded(call.job, resolution);
    else this.hooks.lateResult(call.request, resolution);
  }
}
