import { setPriority } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { RTCDtlsTransport } from 'werift';
import { OfferError } from './call-peer.ts';
import type { MediaWorkerData, WorkerCommand, WorkerEvent } from './media-worker-protocol.ts';
import { setMediaStatsHooks } from '../media-stats.ts';
import { ServerPeer } from './server-peer.ts';
import { MEDIA_RATE, OpusFrameDecoder } from './opus.ts';
import { warmUpCall } from './warm-call.ts';

/**
 * A media worker thread: the werift peer connections of the calls the main thread puts here
 * (ICE, DTLS, SRTP, SCTP, RTP), their jitter buffers and Opus decoding. Downlink packets arrive
 * already encoded, ahead of time, and leave as RTP at their 20 ms slots on this thread's own
 * pacer clock; uplink audio goes back decoded, in one transferred buffer every 5 ms.
 */
if (!parentPort) throw new Error('media-worker.ts runs as a worker thread');
const port = parentPort;
const peers = new Map<number, ServerPeer>();
const post = (event: WorkerEvent): void => port.postMessage(event);

/**
 * This thread's scheduling priority (Linux: setpriority on the calling thread only). Its packets
 * are due every 20 ms while the main thread's work is handed over ahead of time, so on a busy
 * core the media thread should run first. Raising it needs CAP_SYS_NICE; without it the thread
 * keeps the process's priority and the main thread is told why.
 */
const { nice, warmCallTimeoutMs } = workerData as MediaWorkerData;
if (nice !== 0) {
  try {
    setPriority(nice);
    post({ t: 'priority', nice, applied: true });
  } catch (error) {
    post({ t: 'priority', nice, applied: false, reason: error instanceof Error ? error.message : String(error) });
  }
}

/**
 * This thread's media stats, gathered raw and sent to the main thread about once a second (and
 * when it asks), where the host's hooks turn them into metrics. A second of 70 calls is a few
 * thousand numbers: one transferred message.
 */
const STATS_MS = 1000;
let rtpLate: number[] = [];
let gcPauses: number[] = [];
let jitter: number[] = [];
let lost = 0;
setMediaStatsHooks({
  rtpLate: (ms) => rtpLate.push(ms),
  uplinkJitter: (ms) => jitter.push(ms),
  uplinkLost: () => (lost += 1),
});
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcPauses.push(entry.duration);
}).observe({ entryTypes: ['gc'] });
function postStats(asked: boolean): void {
  const event = { t: 'stats', asked, rtpLate: Float64Array.from(rtpLate), gc: Float64Array.from(gcPauses), jitter: Float64Array.from(jitter), lost } satisfies WorkerEvent;
  rtpLate = [];
  gcPauses = [];
  jitter = [];
  lost = 0;
  port.postMessage(event, [event.rtpLate.buffer, event.gc.buffer, event.jitter.buffer]);
}
setInterval(() => {
  if (rtpLate.length + gcPauses.length + jitter.length + lost > 0) postStats(false);
}, STATS_MS).unref();

/**
 * Uplink audio leaves in batches: every frame decoded within AUDIO_BATCH_MS, packed into one
 * buffer that is transferred, not copied. Posting each frame (or each event-loop turn's frames)
 * as its own structured clone cost this thread about a fifth of its time at 50 calls.
 */
const AUDIO_BATCH_MS = 5;
let audioIds: number[] = [];
let audioFrames: Int16Array[] = [];
function queueAudio(id: number, frame: Int16Array): void {
  if (audioIds.length === 0) setTimeout(flushAudio, AUDIO_BATCH_MS);
  audioIds.push(id);
  audioFrames.push(frame);
}
function flushAudio(): void {
  if (audioIds.length === 0) return;
  const lengths = Int32Array.from(audioFrames, (f) => f.length);
  const pcm = new Int16Array(lengths.reduce((a, n) => a + n, 0));
  let offset = 0;
  for (const frame of audioFrames) {
    pcm.set(frame, offset);
    offset += frame.length;
  }
  const ids = Int32Array.from(audioIds);
  port.postMessage({ t: 'audio', ids, lengths, pcm } satisfies WorkerEvent, [ids.buffer, lengths.buffer, pcm.buffer]);
  audioIds = [];
  audioFrames = [];
}

function run(command: WorkerCommand): void {
  switch (command.t) {
    case 'open': {
      const { id } = command;
      peers.set(
        id,
        new ServerPeer({
          ...command.config,
          onAudio: (frame) => queueAudio(id, frame),
          onControl: (text) => post({ t: 'control', id, text }),
          onControlOpen: () => post({ t: 'control-open', id }),
          onControlClosed: () => post({ t: 'control-closed', id }),
          onConnected: () => post({ t: 'connected', id }),
          onGone: () => post({ t: 'gone', id }),
        }),
      );
      return;
    }
    case 'answer': {
      const peer = peers.get(command.id);
      if (!peer) return post({ t: 'answer-failed', id: command.id, offerError: false, message: 'the call is gone' });
      peer.answer(command.sdp).then(
        (sdp) => post({ t: 'answered', id: command.id, sdp }),
        (error: unknown) =>
          post({ t: 'answer-failed', id: command.id, offerError: error instanceof OfferError, message: error instanceof Error ? error.message : String(error) }),
      );
      return;
    }
    case 'packet':
      peers.get(command.id)?.queuePacket(command.packet);
      return;
    case 'discard':
      peers.get(command.id)?.discardQueued();
      return;
    case 'pause':
      peers.get(command.id)?.pauseQueued();
      return;
    case 'resume':
      peers.get(command.id)?.resumeQueued();
      return;
    case 'stats':
      postStats(true);
      return;
    case 'control':
      peers.get(command.id)?.sendControl(command.text);
      return;
    case 'close': {
      const peer = peers.get(command.id);
      peers.delete(command.id);
      void peer?.close();
      return;
    }
  }
}

port.on('message', (commands: WorkerCommand[]) => {
  for (const command of commands) {
    try {
      run(command);
    } catch {
      // One call's failure must not take the others on this worker down: it is reported as gone.
      if ('id' in command) post({ t: 'gone', id: command.id });
    }
  }
});

/**
 * Ready once the modules above are loaded (the import of this module resolves only then), a
 * decoder has been made once (opus-decoder, the fallback, compiles its WASM on first use) and the
 * DTLS certificate exists (werift makes one per thread, shared by all its calls, at the first
 * answer: 17-20 ms cold): the pool holds the server's listen() until every worker says so, so a
 * first call waits for none of it.
 */
const probe = new OpusFrameDecoder(MEDIA_RATE);
await probe.ready;
probe.free();
await RTCDtlsTransport.SetupCertificate();
post({ t: 'ready', ...(warmCallTimeoutMs > 0 ? await warmCall(warmCallTimeoutMs) : {}) });

/**
 * The first call on a worker used to pay werift's first use (its JIT and lazy set-up: ICE,
 * DTLS with its pure-JavaScript ECDHE, SCTP, SRTP): ~20 ms more to answer and ~45 ms more to
 * connect than later calls. A call to itself pays it here. Bounded, and never fatal: on failure
 * the worker says ready anyway and the main thread logs why.
 */
async function warmCall(timeoutMs: number): Promise<{ warmCallMs: number } | { warmCallFailed: string }> {
  const outcome = await warmUpCall(timeoutMs).then(
    (ms) => ({ warmCallMs: ms }),
    (error: unknown) => ({ warmCallFailed: error instanceof Error ? error.message : String(error) }),
  );
  // Its packets were no call of the server's: none of them reaches the metrics.
  rtpLate = [];
  jitter = [];
  lost = 0;
  return outcome;
}
