import type { VoiceClient } from './voice-client.ts';

/** One utterance's timings, end of speech to first audio (bench/voice.ts and talking-load.ts). */
export interface Utterance {
  threshold: number | undefined;
  transcript: string;
  /** Last voiced sample (send time of the frame it ends) → `asr` received. */
  eosToAsr: number;
  /** Last voiced sample → first downlink audio frame received. */
  eosToAudio: number;
  /** `asr` received → first audio frame received (same socket, in order). */
  asrToAudio: number;
  /** Send time of the last uplink frame before `asr` arrived (the frame that decided) → first audio. */
  decidingFrameToAudio: number;
}

/**
 * Sends the clip (its speech ends on a frame boundary), then room tone; waits for the turn's
 * asr, first audio frame and done.
 */
export async function utterance(client: VoiceClient, speech: readonly Buffer[], threshold: number | undefined): Promise<Utterance> {
  const mark = client.mark;
  const sent = await client.mic.play(speech).done;
  const eos = sent.at(-1) as number;
  const asr = await client.waitFor('asr', 8000, mark);
  if (asr.at < eos) throw new Error('the turn ended inside the clip (a pause in the speech counted as end of turn)');
  const firstAudio = await client.firstAudioAfter(asr.at, 8000);
  const log = client.mic.sendLog as number[];
  let deciding = eos;
  for (let i = log.length - 1; i >= 0; i -= 1) {
    if ((log[i] as number) < asr.at) {
      deciding = log[i] as number;
      break;
    }
  }
  await client.waitFor('done', 20000, mark);
  log.splice(0, Math.max(0, log.length - 100));
  client.audioAt.splice(0, client.audioAt.length);
  return {
    threshold,
    transcript: String(asr.body?.text ?? ''),
    eosToAsr: asr.at - eos,
    eosToAudio: firstAudio - eos,
    asrToAudio: firstAudio - asr.at,
    decidingFrameToAudio: firstAudio - deciding,
  };
}

