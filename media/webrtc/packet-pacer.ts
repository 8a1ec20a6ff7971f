import type { PacerClock, Ticking } from '../pacer-clock.ts';
import type { Processor } from '../processor.ts';

const PACKET_MS = 20;
/** Packets a talk spurt opens with, sent at once so the listener's jitter buffer fills. */
export const PACKET_BURST = 3;
export const PACKET_BURST_MS = PACKET_BURST * PACKET_MS;
/** A talk spurt ends when no packet was there for its slot this long. */
const SPURT_END_MS = 40;

/**
 * Paces one call's encoded downlink packets where they are sent (a media worker): one per 20 ms
 * on the clock's grid, the first `burstPackets` of a talk spurt at once (the listener's jitter
 * buffer fills, as the session's own pacer did on a direct send). The session hands packets over
 * ahead of time (Transport.downlinkLeadMs), so its event loop being late does not make them late;
 * if it is later than that lead, a packet goes the moment it arrives and the spurt keeps its
 * timeline unless nothing came for SPURT_END_MS.
 */
export class PacketPacer implements Ticking, Processor<Uint8Array> {
  private readonly queue: Uint8Array[] = [];
  /** Grid slot of the next packet (its send time is nextAt − burst); undefined between spurts. */
  private nextAt: number | undefined;
  private sentInSpurt = 0;
  private readonly burstMs: number;
  /** Set while paused (a possible barge-in): nothing is sent, nothing is dropped. */
  private pausedAt: number | undefined;

  constructor(
    private readonly clock: PacerClock,
    private readonly send: (packet: Uint8Array) => void,
    /** How late each paced packet left, against its slot (ms): the host's metrics hook. */
    private readonly onLate: ((ms: number) => void) | undefined = undefined,
    private readonly burstPackets = PACKET_BURST,
  ) {
    this.burstMs = burstPackets * PACKET_MS;
  }

  push(packet: Uint8Array): void {
    this.queue.push(packet);
    if (this.pausedAt === undefined) this.start();
  }

  /** Holds every queued packet until resume() or clear(). */
  pause(): void {
    if (this.pausedAt !== undefined) return;
    this.pausedAt = performance.now();
    if (this.nextAt !== undefined) this.clock.remove(this);
  }

  /**
   * Sends on from the packet after the last one sent. The spurt's timeline moves by the pause,
   * so the packets still held stay as far ahead of their slots as they were.
   */
  resume(): void {
    const at = this.pausedAt;
    if (at === undefined) return;
    this.pausedAt = undefined;
    if (this.nextAt !== undefined) {
      this.nextAt += performance.now() - at;
      this.clock.add(this);
    }
    if (this.queue.length > 0) this.start();
  }

  private start(): void {
    const now = performance.now();
    if (this.nextAt === undefined) {
      this.clock.add(this);
      // The burst goes now; the packet after it is due at the next grid instant.
      // Half a tick ahead at least, so the packets pushed right after this one join the burst.
      this.nextAt = this.clock.align(now + this.clock.intervalMs / 2);
      this.sentInSpurt = 0;
    }
    this.sendDue(now);
  }

  tick(now: number): void {
    if (this.pausedAt === undefined) this.sendDue(now);
  }

  /** Drops what was not sent yet (barge-in) and ends the spurt; returns how many packets. */
  clear(): number {
    const dropped = this.queue.length;
    this.queue.length = 0;
    this.pausedAt = undefined;
    this.stop();
    return dropped;
  }

  private sendDue(now: number): void {
    while (this.queue.length > 0 && this.nextAt !== undefined && this.nextAt - this.burstMs <= now) {
      // The burst leaves at once by design; every later packet is measured against its slot.
      if (this.sentInSpurt >= this.burstPackets) this.onLate?.(performance.now() - (this.nextAt - this.burstMs));
      this.send(this.queue.shift()!);
      this.sentInSpurt += 1;
      this.nextAt += PACKET_MS;
    }
    if (this.queue.length === 0 && this.nextAt !== undefined && now - (this.nextAt - this.burstMs) > SPURT_END_MS) this.stop();
  }

  private stop(): void {
    if (this.nextAt === undefined) return;
    this.nextAt = undefined;
    this.clock.remove(this);
  }
}
