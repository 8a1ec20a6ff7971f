import { performance } from 'node:perf_hooks';
import WebSocket, { type RawData } from 'ws';
import { int16ToBytes } from '../../media/pcm.ts';
import { withTimeout } from './bench-client.ts';

/**
 * A lean voice-session client for the voice benchmarks: a microphone that sends 20 ms PCM16
 * frames on a shared clock (room tone when it has nothing else to say, like a real open mic),
 * arrival times of every downlink audio frame, and the JSON frames with their arrival times.
 *
 * `lean` sessions (the concurrency load) parse no JSON: they read a frame's type from the prefix
 * the server's JSON.stringify produces and only keep the downlink inter-arrival statistics.
 */

export const FRAME_MS = 20;

export interface ReceivedFrame {
  type: string;
  at: number;
  /** The parsed frame (not in lean sessions). */
  body?: Record<string, unknown>;
}

/** Downlink pacing observed by a session: |inter-arrival − 20 ms| of steady-state frames. */
export interface JitterStats {
  /** Deviations in ms (only while `recording`). */
  deviations: number[];
  /** Audio frames, replies (`turn`) and interruptions received while recording. */
  frames: number;
  turns: number;
  interrupted: number;
}

/**
 * The pacer sends the first frames of a reply at once (its lead: 60 ms ahead of real time, so 4
 * frames); inter-arrival is meaningful from the 5th frame of a reply on.
 */
export const LEAD_BURST_FRAMES = 4;

export class VoiceClient {
  readonly frames: ReceivedFrame[] = [];
  /** Arrival time of every binary (audio) frame. */
  readonly audioAt: number[] = [];
  readonly jitter: JitterStats = { deviations: [], frames: 0, turns: 0, interrupted: 0 };
  recording = false;
  closed = false;
  readonly mic: Mic;
  private waiters: Array<() => void> = [];
  private inTurn = false;
  private turnFrames = 0;
  private lastAudioAt = 0;

  private constructor(
    readonly ws: WebSocket,
    private readonly lean: boolean,
    idle: readonly Buffer[],
  ) {
    this.mic = new Mic(ws, idle);
    if (!lean) this.mic.sendLog = [];
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('close', () => {
      this.closed = true;
      this.mic.stop();
      this.wake();
    });
    ws.on('error', () => undefined);
  }

  /** Opens a voice session (16 kHz PCM16 both ways unless `audio` says otherwise) and waits for ready. */
  static async open(
    wsUrl: string,
    start: Record<string, unknown>,
    options: { lean?: boolean; idle: readonly Buffer[]; timeoutMs?: number },
  ): Promise<VoiceClient> {
    const ws = new WebSocket(wsUrl, { perMessageDeflate: false, skipUTF8Validation: true });
    const client = new VoiceClient(ws, options.lean ?? false, options.idle);
    try {
      await withTimeout(
        new Promise<void>((ok, fail) => {
          ws.once('open', () => {
            ws.send(JSON.stringify({ type: 'start', ...start }));
            ok();
          });
          ws.once('error', fail);
          ws.once('unexpected-response', (_req, res) => fail(new Error(`handshake refused: ${res.statusCode}`)));
        }),
        options.timeoutMs ?? 15000,
        'socket open',
      );
      await client.waitFor('ready', options.timeoutMs ?? 15000);
    } catch (error) {
      ws.terminate();
      throw error;
    }
    return client;
  }

  send(frame: Record<string, unknown>): void {
    if (!this.closed) this.ws.send(JSON.stringify(frame));
  }

  /** Index to pass to waitFor so only frames from now on count. */
  get mark(): number {
    return this.frames.length;
  }

  /** First frame of `type` from index `from` on that matches. */
  async waitFor(type: string, timeoutMs = 10000, from = 0, match: (f: ReceivedFrame) => boolean = () => true): Promise<ReceivedFrame> {
    const deadline = performance.now() + timeoutMs;
    let scanned = from;
    for (;;) {
      for (; scanned < this.frames.length; scanned += 1) {
        const f = this.frames[scanned] as ReceivedFrame;
        if (f.type === 'error' && type !== 'error') throw new Error(`server error frame while waiting for ${type}: ${JSON.stringify(f.body)}`);
        if (f.type === type && match(f)) return f;
      }
      if (this.closed) throw new Error(`socket closed while waiting for ${type}`);
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${type}; got ${this.frames.slice(from).map((f) => f.type).join(',')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Arrival time of the first audio frame after `after` (ms, performance.now()), waiting for it. */
  async firstAudioAfter(after: number, timeoutMs = 10000): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = this.audioAt.find((t) => t >= after);
      if (found !== undefined) return found;
      if (this.closed) throw new Error('socket closed while waiting for audio');
      if (performance.now() > deadline) throw new Error(`no downlink audio within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): Promise<void> {
    this.mic.stop();
    if (this.closed) return Promise.resolve();
    return new Promise((done) => {
      const timer = setTimeout(() => {
        this.ws.terminate();
        done();
      }, 2000);
      this.ws.once('close', () => {
        clearTimeout(timer);
        done();
      });
      this.ws.close(1000);
    });
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    const now = performance.now();
    if (isBinary) {
      if (!this.lean) this.audioAt.push(now);
      if (this.inTurn) {
        if (this.recording) {
          this.jitter.frames += 1;
          if (this.turnFrames >= LEAD_BURST_FRAMES) this.jitter.deviations.push(Math.abs(now - this.lastAudioAt - FRAME_MS));
        }
        this.turnFrames += 1;
      }
      this.lastAudioAt = now;
      if (!this.lean) this.wake();
      return;
    }
    const raw = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
    const type = frameType(raw);
    if (type === 'turn') {
      this.inTurn = true;
      this.turnFrames = 0;
      if (this.recording) this.jitter.turns += 1;
    } else if (type === 'done' || type === 'interrupted') {
      this.inTurn = false;
      if (type === 'interrupted' && this.recording) this.jitter.interrupted += 1;
    }
    if (this.lean) {
      if (type === 'ready' || type === 'error') {
        this.frames.push({ type, at: now, body: JSON.parse(raw.toString('utf8')) as Record<string, unknown> });
        this.wake();
      }
      return;
    }
    this.frames.push({ type: type ?? '?', at: now, body: JSON.parse(raw.toString('utf8')) as Record<string, unknown> });
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

const PREFIX = Buffer.from('{"type":"');

function frameType(raw: Buffer): string | undefined {
  if (raw.subarray(0, PREFIX.length).equals(PREFIX)) {
    const end = raw.indexOf(0x22, PREFIX.length);
    if (end > 0) return raw.toString('latin1', PREFIX.length, end);
  }
  try {
    const parsed = JSON.parse(raw.toString('utf8')) as { type?: unknown };
    return typeof parsed.type === 'string' ? parsed.type : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The microphone

/** PCM16 → one wire frame per 20 ms (the last partial frame padded with zeros). */
export function toFrames(samples: Int16Array, rate = 16000): Buffer[] {
  const n = Math.round((rate * FRAME_MS) / 1000);
  const out: Buffer[] = [];
  for (let i = 0; i < samples.length; i += n) {
    const frame = new Int16Array(n);
    frame.set(samples.subarray(i, Math.min(samples.length, i + n)));
    out.push(Buffer.from(int16ToBytes(frame)));
  }
  return out;
}

interface Segment {
  frames: readonly Buffer[];
  next: number;
  sentAt: number[];
  done: (sentAt: number[]) => void;
}

/**
 * An open microphone: one frame every 20 ms, on the shared MicClock. Queued segments are sent in
 * order; between them it sends room tone (`idle`, cycled), or loops `loop` when set.
 */
export class Mic {
  /** Ideal send time of the next frame. */
  nextAt = 0;
  /** Actual send time of every frame, when enabled (latency sessions). */
  sendLog: number[] | undefined;
  private readonly queue: Segment[] = [];
  private idleIndex = 0;
  private loop: { frames: readonly Buffer[]; index: number } | undefined;
  private running = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly idle: readonly Buffer[],
  ) {}

  /** Starts sending, the first frame `phaseMs` from now. */
  start(phaseMs = 0): void {
    if (this.running) return;
    this.running = true;
    this.nextAt = performance.now() + phaseMs;
    micClock.add(this);
  }

  stop(): void {
    if (!this.running) return;
    this.running = false;
    micClock.remove(this);
    for (const s of this.queue.splice(0)) s.done(s.sentAt);
  }

  /** Loops these frames instead of room tone from now on, starting at `offset`. */
  setLoop(frames: readonly Buffer[], offset = 0): void {
    this.loop = { frames, index: offset % frames.length };
  }

  /**
   * Queues a segment. `sentAt` fills with the actual send time of each of its frames as they go
   * out; `done` resolves once the last one was sent (or the segment was cleared).
   */
  play(frames: readonly Buffer[]): { sentAt: number[]; done: Promise<number[]> } {
    const sentAt: number[] = [];
    const done = new Promise<number[]>((resolve) => this.queue.push({ frames, next: 0, sentAt, done: resolve }));
    return { sentAt, done };
  }

  /** Drops queued segments (their promises resolve with what was sent). */
  clear(): void {
    for (const s of this.queue.splice(0)) s.done(s.sentAt);
  }

  /** @internal */
  tick(now: number): void {
    while (this.running && this.nextAt <= now) {
      this.nextAt += FRAME_MS;
      if (this.ws.readyState !== WebSocket.OPEN) return;
      this.sendLog?.push(performance.now());
      const segment = this.queue[0];
      if (segment) {
        const frame = segment.frames[segment.next++] as Buffer;
        this.ws.send(frame, { binary: true });
        segment.sentAt.push(performance.now());
        if (segment.next >= segment.frames.length) {
          this.queue.shift();
          segment.done(segment.sentAt);
        }
      } else if (this.loop) {
        const frame = this.loop.frames[this.loop.index] as Buffer;
        this.loop.index = (this.loop.index + 1) % this.loop.frames.length;
        this.ws.send(frame, { binary: true });
      } else {
        const frame = this.idle[this.idleIndex] as Buffer;
        this.idleIndex = (this.idleIndex + 1) % this.idle.length;
        this.ws.send(frame, { binary: true });
      }
    }
  }
}

/** One timer for every microphone of the bench process (1 ms: sends are at most ~1 ms late). */
class MicClock {
  private readonly mics = new Set<Mic>();
  private timer: NodeJS.Timeout | undefined;

  add(mic: Mic): void {
    this.mics.add(mic);
    this.timer ??= setInterval(() => {
      const now = performance.now();
      for (const m of this.mics) if (m.nextAt <= now) m.tick(now);
    }, 1);
  }

  remove(mic: Mic): void {
    this.mics.delete(mic);
    if (this.mics.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

export const micClock = new MicClock();
