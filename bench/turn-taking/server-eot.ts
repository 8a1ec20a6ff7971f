import { paced } from '../../media/testing/realtime.ts';
import { int16ToBytes } from '../../media/pcm.ts';
import { VAD_FRAME_MS, VAD_FRAME_SAMPLES } from '../../media/vad.ts';
import { WsTestClient } from '../../signaling/testing/ws-test-client.ts';
import type { ChildServer } from '../lib/child-server.ts';
import { progress } from '../lib/stats.ts';
import type { TurnClip } from '../turn-corpus/corpus.ts';
import { LEAD_MS, streamedClip } from './end-of-turn.ts';
import { judgeClip, type ClipJudgement } from './judge.ts';
import { streamTimeAt } from './sent-frames.ts';

/**
 * End of turn through a real server: each labelled utterance is streamed in real time over the
 * WebSocket into a fresh voice session at the default turn_end_threshold (300 ms of room tone,
 * the clip, 3 s of room tone, 20 ms frames), as the replay (end-of-turn.ts) hears it.
 *
 * The client sees a turn end as the `asr` frame: the session sends it the moment the final
 * transcript of the ended turn is ready, before the reply's `turn` frame and before any reply
 * audio; the endpointer's decision itself never goes on the wire. That turn's `done.metrics.asr_final`
 * (the decision → the transcript, server clock) dates the decision: asr arrival − asr_final.
 *
 * Every reply is dropped (`interrupt`) as soon as its asr arrives, so after a cut-off the rest of
 * the clip reaches an endpointer with no reply in flight, as in the replay (no barge-in), and a
 * clip that was cut still has an end-of-turn delay. A turn that ends with an empty transcript
 * sends nothing: the client cannot see it, and it is not counted (the replay counts it).
 */

export interface ServerTurnEnd {
  text: string;
  /** Arrival of the asr frame, ms of clip time. */
  asrMs: number;
  /** asrMs − the turn's asr_final (undefined: its done never came or had none). */
  decisionMs: number | undefined;
}

export interface ServerEotOutcome {
  clip: TurnClip;
  ends: ServerTurnEnd[];
  /** The labels against the decisions (the replay's measure; a missing decision counts at its asr). */
  byDecision: ClipJudgement;
  /** The labels against the asr frames' arrivals (what the client sees). */
  byAsr: ClipJudgement;
}

async function trial(server: ChildServer, clip: TurnClip, n: number): Promise<ServerEotOutcome> {
  const client = await WsTestClient.open(server.wsUrl);
  try {
    client.send({ type: 'start', session_id: `eot-${n}-${Date.now()}`, api_key: server.apiKey, mode: { kind: 'service', greeting: false }, audio: { sr: 16000 } });
    await client.waitFor('ready', () => true, 15000);
    // The client's own listener ran first: the frame is already parsed and recorded.
    client.ws.on('message', (_data, binary) => {
      if (!binary && client.frames.at(-1)?.type === 'asr') client.send({ type: 'interrupt' });
    });
    const endMs = clip.endSample / 16;
    const samples = streamedClip(clip);
    const sentAt: number[] = [];
    // Settled once a turn end at or after the end of speech is dated: nothing later counts.
    const settled = (): boolean =>
      client.all('asr').some((asr) => {
        const done = client.all('done').find((d) => d.turn_id === asr.turn_id);
        return done !== undefined && sentAt.length > 0 && streamTimeAt(sentAt, client.arrivalOf(asr)) - LEAD_MS - (done.metrics?.asr_final ?? 0) >= endMs;
      });
    await paced(
      Math.ceil(samples.length / VAD_FRAME_SAMPLES),
      VAD_FRAME_MS,
      (i) => {
        client.sendBinary(int16ToBytes(samples.subarray(i * VAD_FRAME_SAMPLES, (i + 1) * VAD_FRAME_SAMPLES)));
        sentAt.push(performance.now());
      },
      () => client.closed !== undefined || settled(),
    );
    if (client.closed) throw new Error(`socket closed (${client.closed.code} ${client.closed.reason})`);
    const ends: ServerTurnEnd[] = [];
    for (const asr of client.all('asr')) {
      const done = asr.turn_id === undefined ? undefined : await client.waitFor('done', (d) => d.turn_id === asr.turn_id, 5000).catch(() => undefined);
      const asrMs = streamTimeAt(sentAt, client.arrivalOf(asr)) - LEAD_MS;
      const asrFinal = done?.metrics?.asr_final;
      ends.push({ text: asr.text, asrMs, decisionMs: asrFinal === undefined ? undefined : asrMs - asrFinal });
    }
    return {
      clip,
      ends,
      byDecision: judgeClip(clip, ends.map((e) => e.decisionMs ?? e.asrMs)),
      byAsr: judgeClip(clip, ends.map((e) => e.asrMs)),
    };
  } finally {
    client.close();
  }
}

/**
 * `parallel` sessions at once, each clip in a fresh one, in corpus order; one clip first as a
 * warm-up (not counted). Outcomes in the order of `clips`; undefined for a trial that failed
 * (reported in progress).
 */
export async function runServerEot(server: ChildServer, clips: TurnClip[], parallel: number, onProgress: (done: number) => void): Promise<Array<ServerEotOutcome | undefined>> {
  if (clips.length > 0) await trial(server, clips[0]!, 0);
  const outcomes: Array<ServerEotOutcome | undefined> = new Array<ServerEotOutcome | undefined>(clips.length);
  let next = 0;
  let finished = 0;
  const worker = async (): Promise<void> => {
    for (let c = next++; c < clips.length; c = next++) {
      const clip = clips[c]!;
      outcomes[c] = await trial(server, clip, c + 1).catch((error: unknown) => {
        progress(`  ${clip.id}: trial failed (${error instanceof Error ? error.message.slice(0, 160) : String(error)})`);
        return undefined;
      });
      onProgress((finished += 1));
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return outcomes;
}
