import { concat, roomTone, streamRealtime } from '../../media/testing/audio-stream.ts';
import { WsTestClient } from '../../signaling/testing/ws-test-client.ts';
import type { ChildServer } from '../lib/child-server.ts';
import { progress } from '../lib/stats.ts';
import { Mic, toFrames } from '../lib/voice-client.ts';
import type { OverlapClip } from '../turn-corpus/corpus.ts';

/**
 * Sounds during the assistant's speech, over the real WebSocket path of a real server (local
 * pocketsphinx, flite, the local model): a reply of ~6 s starts, 1.2 s into its audio the clip
 * is streamed in real time (then room tone), and the client watches the downlink.
 */
const REPLY = 'One two three four five six seven eight nine ten. Eleven twelve thirteen fourteen fifteen sixteen seventeen.';
const SOUND_AFTER_MS = 1200;
/**
 * A silence in the downlink this long, from a frame sent after the sound began, is a pause (a
 * pause lasts at least the sound plus its end of turn); shorter ones are event-loop stalls of a
 * loaded machine.
 */
const GAP_MS = 250;
/** A shorter silence than GAP_MS but this long after the sound began is a brief pause (hiss, a dropped onset). */
const BRIEF_GAP_MS = 80;

/**
 * `sound`: the client sends nothing but the sound (and room tone after it), so the session's VAD
 * hears the sound with no audio before it. `continuous`: an open microphone, as the browser
 * library's, sends room tone from the session's start and the sound in its place.
 */
export type MicMode = 'sound' | 'continuous';
const ROOM_TONE = toFrames(roomTone(2000));

export interface OverlapOutcome {
  clip: OverlapClip;
  interrupted: boolean;
  /** The downlink stopped for more than GAP_MS after the sound began. */
  paused: boolean;
  /** Silences of BRIEF_GAP_MS to GAP_MS in the downlink after the sound began. */
  briefPauses: number;
  /** Not interrupted and every byte of the reply arrived once, in order (compared with a quiet run). */
  intact: boolean;
  /** Length of the pause when the reply went on after it. */
  resumeMs: number | undefined;
  /** Sound onset → last downlink frame before the downlink stopped (pause or interruption). */
  stopMs: number | undefined;
}

interface Trial {
  interrupted: boolean;
  audio: Buffer;
  gap: { lastBefore: number; ms: number } | undefined;
  briefPauses: number;
  soundAt: number;
}

async function trial(server: ChildServer, sound: Int16Array | undefined, n: number, micMode: MicMode): Promise<Trial> {
  const client = await WsTestClient.open(server.wsUrl);
  client.send({ type: 'start', session_id: `tt-${n}-${Date.now()}`, api_key: server.apiKey, mode: { kind: 'service', greeting: false }, audio: { sr: 16000 } });
  await client.waitFor('ready', () => true, 10000);
  const mic = micMode === 'continuous' ? new Mic(client.ws, ROOM_TONE) : undefined;
  mic?.start();
  const arrivals: number[] = [];
  client.ws.on('message', (_d, binary) => binary && arrivals.push(performance.now()));
  client.send({ type: 'inject_context', message_id: 'm1', role: 'user', text: `say ${REPLY}` });
  const turnId = (await client.waitFor('inject_context_ack', () => true, 10000)).turn_id!;
  const deadline = performance.now() + 20000;
  while (arrivals.length === 0) {
    if (performance.now() > deadline || client.closed) throw new Error('no reply audio within 20 s');
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, SOUND_AFTER_MS - (performance.now() - arrivals[0]!)));
  // The clip's first sample is its onset, and a frame leaves once its 20 ms are captured: the
  // first frame sent holds the 20 ms before it.
  let soundAt = performance.now() - 20;
  let streaming: Promise<unknown> = Promise.resolve();
  if (sound && mic) {
    const segment = mic.play(toFrames(sound));
    streaming = segment.done.then((sentAt) => {
      if (sentAt[0] !== undefined) soundAt = sentAt[0] - 20;
    });
  } else if (sound) {
    streaming = streamRealtime(client, concat(sound, roomTone(2500)));
  }
  const done = await client.waitFor('done', (f) => f.turn_id === turnId, 60000);
  await streaming;
  const after = arrivals.findIndex((a) => a >= soundAt);
  let gap: Trial['gap'];
  // From the last frame that arrived before the onset: the downlink may stop right after it.
  for (let i = after < 0 ? arrivals.length : Math.max(1, after); i < arrivals.length; i += 1) {
    if (arrivals[i]! - arrivals[i - 1]! > GAP_MS) {
      gap = { lastBefore: arrivals[i - 1]!, ms: arrivals[i]! - arrivals[i - 1]! };
      break;
    }
  }
  // Interrupted: the audio simply ends; the "gap" runs to the end of the trial.
  if (!gap && done.status === 'interrupted' && arrivals.length > 0) gap = { lastBefore: arrivals[arrivals.length - 1]!, ms: Number.POSITIVE_INFINITY };
  let briefPauses = 0;
  for (let i = Math.max(1, after); after >= 0 && i < arrivals.length; i += 1) {
    const ms = arrivals[i]! - arrivals[i - 1]!;
    if (ms > BRIEF_GAP_MS && ms <= GAP_MS) briefPauses += 1;
  }
  const result = { interrupted: done.status === 'interrupted', audio: Buffer.concat(client.audio), gap, briefPauses, soundAt };
  mic?.stop();
  client.close();
  return result;
}

/** Outcomes of the trials that ran (a trial that failed, e.g. timed out, is reported in progress and left out). */
export async function runOverlaps(server: ChildServer, clips: OverlapClip[], parallel: number, onProgress: (done: number) => void, micMode: MicMode = 'sound'): Promise<OverlapOutcome[]> {
  const reference = (await trial(server, undefined, 0, micMode)).audio;
  const outcomes: OverlapOutcome[] = [];
  let next = 0;
  let finished = 0;
  const worker = async (): Promise<void> => {
    while (next < clips.length) {
      const index = next;
      next += 1;
      const clip = clips[index]!;
      const t = await trial(server, clip.audio, index + 1, micMode).catch((error: unknown) => {
        progress(`  ${clip.id}: trial failed (${error instanceof Error ? error.message.slice(0, 120) : String(error)})`);
        return undefined;
      });
      finished += 1;
      onProgress(finished);
      if (!t) continue;
      const interruptedOrPaused = t.gap !== undefined;
      outcomes.push({
        clip,
        interrupted: t.interrupted,
        paused: interruptedOrPaused,
        briefPauses: t.briefPauses,
        intact: !t.interrupted && t.audio.equals(reference),
        resumeMs: t.gap && Number.isFinite(t.gap.ms) ? t.gap.ms : undefined,
        stopMs: t.gap ? t.gap.lastBefore - t.soundAt : undefined,
      });
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return outcomes;
}
