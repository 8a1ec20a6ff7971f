import { mediaWorkerPool, MediaWorkerStartError, type MediaWorkerPool } from '../../media/webrtc/worker-peer.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';

/** The bound of a media worker's warm-up call: a quiet machine takes ~0.2 s; a starved one must not hold its start for long. */
export const WARM_CALL_TIMEOUT_MS = 5000;

/** The process's media worker pool for this configuration, telling `log` what goes wrong with its threads. */
export function workerPoolFor(config: Config, log: Logger): MediaWorkerPool {
  // Only workers started ahead of calls make the warm-up call: a lazily started one has a call waiting.
  const warmCall = config.WEBRTC_WARM_WORKERS && config.WEBRTC_WARM_CALL ? WARM_CALL_TIMEOUT_MS : 0;
  const pool = mediaWorkerPool(config.WEBRTC_MEDIA_WORKERS, config.WEBRTC_MEDIA_WORKER_NICE, warmCall);
  pool.onWarmCallFailed ??= (reason) => log.warn({ reason }, "a media worker's warm-up call failed; it is ready anyway, its first WebRTC call pays werift's first use");
  pool.onPriorityRefused ??= (reason) => log.warn({ nice: config.WEBRTC_MEDIA_WORKER_NICE }, `${reason}; grant CAP_SYS_NICE or set WEBRTC_MEDIA_WORKER_NICE=0`);
  pool.onReplaced ??= (outcome) => {
    if (outcome.ok) log.info({ start_ms: Math.round(outcome.startMs) }, 'media worker replaced: a worker thread stopped, a new one is ready');
    else log.error({ reason: outcome.reason }, 'media worker replacement could not start; the next WebRTC call starts another');
  };
  return pool;
}

/**
 * With WebRTC calls possible (media workers configured, voice on), starts the media workers and
 * waits until each has loaded werift and Opus, so the first call after a start or a restart does
 * not pay for it. A worker that stops before it is ready fails the start with why and what to
 * set; one still loading after WEBRTC_WORKER_START_TIMEOUT_MS (a starved machine) is logged and
 * the server listens anyway: the first calls wait for it as they would have without the warm-up.
 */
export async function warmMediaWorkers(config: Config, log: Logger, pool = workerPoolFor(config, log)): Promise<void> {
  if (!config.WEBRTC_WARM_WORKERS || config.WEBRTC_MEDIA_WORKERS === 0) return;
  try {
    const startMs = await pool.warm(config.WEBRTC_WORKER_START_TIMEOUT_MS);
    const warmCallMs = pool.warmCallMs;
    log.info({ workers: pool.size, start_ms: Math.round(startMs), ...(warmCallMs === undefined ? {} : { warm_call_ms: Math.round(warmCallMs) }) }, 'media workers ready');
  } catch (error) {
    if (!(error instanceof MediaWorkerStartError)) throw error;
    if (error.timedOut) {
      log.warn({ workers: pool.size, ready: pool.ready }, `${error.message}; listening anyway, the first WebRTC calls wait for them`);
      return;
    }
    log.error({ reason: error.message }, 'media workers could not start');
    throw new MediaWorkerStartError(
      `${error.message}. WebRTC calls run in these threads: fix the installation, or set WEBRTC_MEDIA_WORKERS=0 to run calls on the main thread`,
      false,
    );
  }
}
