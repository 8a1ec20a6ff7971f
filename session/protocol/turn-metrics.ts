import { z } from 'zod';

/**
 * A turn's latency waterfall: how long each stage took, in milliseconds. It travels as
 * `done.metrics` (only the stages that turn had) and feeds `parley_turn_stage_seconds{stage}`.
 *
 * - end_of_turn: the last voiced sample arrived → the endpointer decided the turn was over
 * - asr_final: that decision → the final transcript
 * - llm_first_token: the model request → its first token (text or tool call)
 * - tts_first_audio: the first sentence sent to synthesis → its first audio
 * - first_audio_out: the end-of-turn decision → the reply's first audio byte sent
 * - text_first_delta: input_text received → the first text_delta sent
 * - barge_in_stop: the onset of the speech that interrupted the reply → its downlink stopped
 */
export const TURN_STAGES = ['end_of_turn', 'asr_final', 'llm_first_token', 'tts_first_audio', 'first_audio_out', 'text_first_delta', 'barge_in_stop'] as const;
export type TurnStage = (typeof TURN_STAGES)[number];

const ms = z.number().min(0).optional();
export const TurnMetrics = z.strictObject({
  end_of_turn: ms,
  asr_final: ms,
  llm_first_token: ms,
  tts_first_audio: ms,
  first_audio_out: ms,
  text_first_delta: ms,
  barge_in_stop: ms,
});
export type TurnMetrics = z.infer<typeof TurnMetrics>;
