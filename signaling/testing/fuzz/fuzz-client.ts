import WebSocket from 'ws';
import { CLIENT_FRAME_TYPES, startFrame, validFrame, type ClientFrameType, type FrameContext } from './frames.ts';
import { mutate, type Shot } from './mutations.ts';
import { Inbox, type Frame } from './inbox.ts';
import type { Rng } from '../../../session/testing/rng.ts';


/** Mutations that leave big or deep data in a session when it accepts them. */
const HOSTILE = new Set(['deep-json', 'huge-string', 'huge-array']);

/** What one fuzzing client did and saw. */
export interface FuzzTally {
  framesSent: number;
  byKind: Map<string, number>;
  sockets: number;
  resumes: number;
  errors: Map<string, number>;
  closes: Map<number, number>;
  /** Turns still without their `done` on a socket that stayed open. */
  hungTurns: string[];
  /** The last session answered a plain turn at the end (it lived through the fuzz). */
  aliveAtEnd: boolean;
}

/**
 * One client fuzzing its own session: it opens a socket, starts (sometimes with a mutated
 * start frame), then sends a mix of mutated and valid frames of every type (and, in voice,
 * random binary audio), answering the tool calls it is sent now and then. When its socket is
 * closed it opens another, resuming with its token half the time; now and then it drops the
 * socket itself. Every `turn` it sees must be closed by `done` while its socket is open.
 */
export class FuzzClient {
  readonly tally: FuzzTally = { framesSent: 0, byKind: new Map(), sockets: 0, resumes: 0, errors: new Map(), closes: new Map(), hungTurns: [], aliveAtEnd: false };
  private ws: WebSocket | undefined;
  private ready = false;
  private token: string | undefined;
  private readonly openTurns = new Map<string, number>();
  private readonly ctx: FrameContext;
  private readonly inbox = new Inbox(() => this.ws?.readyState === WebSocket.OPEN);

  constructor(
    private readonly wsUrl: string,
    private readonly key: string,
    private readonly rng: Rng,
    modality: 'text' | 'voice',
    sessionId: string,
  ) {
    this.ctx = { sessionId, modality, callIds: [], approvalIds: [], interactionIds: [], voices: [] };
  }

  /**
   * Sends `sweep` first (each frame type through one named mutation), then random shots up to
   * `count`; then waits for open turns to close and checks the session still answers.
   */
  async run(count: number, settleMs: number, sweep: ReadonlyArray<[ClientFrameType, string]> = []): Promise<FuzzTally> {
    let swept = 0;
    while (this.tally.framesSent < count || swept < sweep.length) {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        await this.connect();
        continue;
      }
      const kind = swept < sweep.length ? this.fire(sweep[swept++]) : this.fire();
      // The shot ends the socket (ws closes 1007 / 1009): what would follow on it is never read.
      if (kind === 'bad-utf8' || kind === 'oversize-fatal') await this.until(() => false, 2000);
      // A drop right after a hostile frame: whatever it left in the session is copied into the
      // resume stash at once.
      else if (HOSTILE.has(kind) && this.rng.chance(0.1)) this.ws.terminate();
      // Stay within what the server reads: wait for the socket to drain now and then.
      if (this.ws.bufferedAmount > 256 * 1024 || this.tally.framesSent % 50 === 0) await new Promise((r) => setImmediate(r));
      // A drop now and then: the session is stashed and the next socket may resume it.
      if (this.rng.chance(0.01)) this.ws.terminate();
    }
    await this.settle(settleMs);
    this.tally.aliveAtEnd = await this.answersPlainTurn(settleMs);
    this.ws?.terminate();
    return this.tally;
  }

  private count(kind: string): void {
    this.tally.framesSent += 1;
    this.tally.byKind.set(kind, (this.tally.byKind.get(kind) ?? 0) + 1);
  }

  private async connect(): Promise<void> {
    this.ready = false;
    this.openTurns.clear();
    const ws = new WebSocket(this.wsUrl, { perMessageDeflate: false });
    this.ws = ws;
    this.tally.sockets += 1;
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.onFrame(JSON.parse(String(data)) as Frame);
    });
    ws.on('error', () => undefined);
    const closed = new Promise<void>((resolve) =>
      ws.once('close', (code) => {
        this.tally.closes.set(code, (this.tally.closes.get(code) ?? 0) + 1);
        this.ready = false;
        // A closed socket ends its turns: they are not hung, whatever was in flight.
        this.openTurns.clear();
        this.inbox.notify();
        resolve();
      }),
    );
    const opened = await new Promise<boolean>((resolve) => {
      ws.once('open', () => resolve(true));
      ws.once('close', () => resolve(false));
    });
    if (!opened) {
      // Refused at the upgrade (e.g. draining): counted, so a run always makes progress.
      this.count('upgrade-refused');
      return;
    }
    const resume = this.token !== undefined && this.rng.chance(0.5);
    const start = startFrame(this.ctx.sessionId, this.ctx.modality, { api_key: this.key, ...(resume ? { resume_token: this.token } : {}) });
    if (resume) this.tally.resumes += 1;
    // Sometimes the start itself is mutated: the socket is refused, and the next one starts clean.
    const shot: Shot = this.rng.chance(0.1) ? mutate(start, this.rng) : { kind: 'start', payload: JSON.stringify(start), binary: false };
    ws.send(shot.payload, { binary: shot.binary });
    this.count(`start:${shot.kind}`);
    await Promise.race([this.until(() => this.ready), closed]);
  }

  /** Sends one shot (a named mutation of a frame type when forced); returns its kind. */
  private fire(forced?: [ClientFrameType, string]): string {
    const ws = this.ws!;
    if (!forced && this.ctx.modality === 'voice' && this.rng.chance(0.3)) {
      const bytes = Buffer.alloc(1 + this.rng.int(1200));
      for (let i = 0; i < bytes.length; i += 1) bytes[i] = this.rng.chance(0.5) ? 0 : this.rng.int(256);
      ws.send(bytes, { binary: true });
      this.count('audio');
      return 'audio';
    }
    const type = forced?.[0] ?? this.rng.pick(CLIENT_FRAME_TYPES);
    const frame = validFrame(type, this.ctx, this.rng);
    const shot: Shot = forced ? mutate(frame, this.rng, forced[1]) : this.rng.chance(0.3) ? { kind: 'valid', payload: JSON.stringify(frame), binary: false } : mutate(frame, this.rng);
    ws.send(shot.payload, { binary: shot.binary });
    this.count(`${type}:${shot.kind}`);
    return shot.kind === 'oversize' && shot.payload.length > 1024 * 1024 ? 'oversize-fatal' : shot.kind;
  }

  private onFrame(frame: Frame): void {
    const { ctx } = this;
    switch (frame.type) {
      case 'ready':
        this.ready = true;
        this.token = frame.resume_token as string;
        ctx.voices = (frame.voices as { voice: string }[]).map((v) => v.voice);
        break;
      case 'turn':
        this.openTurns.set(frame.turn_id as string, Date.now());
        break;
      case 'done':
        this.openTurns.delete(frame.turn_id as string);
        break;
      case 'tool_call':
        ctx.callIds.push(frame.id as string);
        if (this.rng.chance(0.5)) this.ws?.send(JSON.stringify({ type: 'tool_result', id: frame.id, content: { ok: true }, outcome: 'succeeded', verified: true }));
        break;
      case 'permission_pending':
        ctx.approvalIds.push(frame.id as string);
        break;
      case 'tool_job_narration':
        ctx.interactionIds.push(...(frame.interaction_ids as string[]));
        break;
      case 'error':
        this.tally.errors.set(frame.code as string, (this.tally.errors.get(frame.code as string) ?? 0) + 1);
        break;
    }
    for (const list of [ctx.callIds, ctx.approvalIds, ctx.interactionIds]) if (list.length > 64) list.splice(0, list.length - 64);
    this.inbox.notify();
  }

  private until(done: () => boolean, timeoutMs = 15_000): Promise<void> {
    return this.inbox.until(done, timeoutMs);
  }

  /** Every open turn must get its done within `settleMs` of the last shot. */
  private async settle(settleMs: number): Promise<void> {
    await this.until(() => this.openTurns.size === 0, settleMs);
    if (this.ws?.readyState === WebSocket.OPEN) this.tally.hungTurns.push(...this.openTurns.keys());
  }

  /** A well-formed turn on a fresh, clean session socket of the same client gets its reply. */
  private async answersPlainTurn(timeoutMs: number): Promise<boolean> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN || !this.ready) {
        this.token = undefined;
        await this.connect();
      }
      if (this.ready && (await this.plainTurn(timeoutMs))) return true;
    }
    return false;
  }

  private async plainTurn(timeoutMs: number): Promise<boolean> {
    let completed = false;
    const watch = (data: WebSocket.RawData, isBinary: boolean): void => {
      if (isBinary) return;
      const frame = JSON.parse(String(data)) as Frame;
      if (frame.type === 'done' && frame.status === 'completed') completed = true;
    };
    this.ws!.on('message', watch);
    const text = 'what is 12 times 7';
    this.ws!.send(JSON.stringify(this.ctx.modality === 'text' ? { type: 'input_text', text } : { type: 'inject_context', message_id: `end-${this.rng.int(1e9)}`, text, role: 'user' }));
    await this.until(() => completed, timeoutMs);
    return completed;
  }
}
