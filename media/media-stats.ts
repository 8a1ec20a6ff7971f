/**
 * What media code reports for the host's metrics, as plain callbacks, one set per thread: a
 * media worker batches its own and the main thread relays them here. Media keeps no metric of its
 * own; until the host installs its hooks (signaling/observability/), reports go nowhere.
 */
export interface MediaStatsHooks {
  /** A paced RTP packet left this late against its 20 ms slot (ms). */
  rtpLate(ms: number): void;
  /** An uplink RTP packet the jitter buffer gave up on. */
  uplinkLost(): void;
  /** One call's uplink interarrival jitter now (RFC 3550, ms), about once a second of audio. */
  uplinkJitter(ms: number): void;
  /** A garbage-collection pause of a media worker thread (ms). */
  workerGc(ms: number): void;
  /** Uplink frames a lagging Silero thread left to the fvad fallback. */
  vadFallback(frames: number): void;
}

const hooks: MediaStatsHooks = { rtpLate: () => undefined, uplinkLost: () => undefined, uplinkJitter: () => undefined, workerGc: () => undefined, vadFallback: () => undefined };

export function mediaStats(): MediaStatsHooks {
  return hooks;
}

export function setMediaStatsHooks(installed: Partial<MediaStatsHooks>): void {
  Object.assign(hooks, installed);
}
