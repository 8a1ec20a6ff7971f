import { mediaStats } from '../media-stats.ts';

/** RTP clock of Opus (RFC 7587): 48 kHz whatever the audio's own rate. */
const RTP_CLOCK_PER_MS = 48;
/** One report per this many packets: about a second of 20 ms audio. */
const REPORT_EVERY = 50;

/**
 * One call's uplink quality as RFC 3550 measures it: the interarrival jitter estimate (the mean
 * deviation of packet spacing on arrival from their spacing at the sender, smoothed over 16
 * packets), reported through the media hooks about once a second of received audio, and each
 * packet the jitter buffer gave up on, reported as it happens.
 */
export class UplinkStats {
  private lastTimestamp = 0;
  private lastAt: number | undefined;
  private jitterMs = 0;
  private packets = 0;

  arrived(timestamp: number, at: number): void {
    if (this.lastAt !== undefined) {
      // Timestamps wrap at 2^32; spacing is small, so the signed 32-bit difference is exact.
      const sentGapMs = ((timestamp - this.lastTimestamp) | 0) / RTP_CLOCK_PER_MS;
      const d = Math.abs(at - this.lastAt - sentGapMs);
      this.jitterMs += (d - this.jitterMs) / 16;
    }
    this.lastTimestamp = timestamp;
    this.lastAt = at;
    this.packets += 1;
    if (this.packets % REPORT_EVERY === 0) mediaStats().uplinkJitter(this.jitterMs);
  }

  lost(): void {
    mediaStats().uplinkLost();
  }
}
