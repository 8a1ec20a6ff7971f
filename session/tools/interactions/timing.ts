import type { NarrationTiming } from './narration-queue.ts';

export interface InteractionConfig {
  INTERACTION_QUEUE_DEADLINE_S: number;
  INTERACTION_QUEUE_DEADLINE_ROUNDS: number;
}

/** INTERACTION_QUEUE_DEADLINE_S / _ROUNDS from the validated Config, as the narration queue uses them. */
export function interactionTiming(config: InteractionConfig): NarrationTiming {
  return { deadlineMs: Math.max(1, Math.round(config.INTERACTION_QUEUE_DEADLINE_S * 1000)), rounds: config.INTERACTION_QUEUE_DEADLINE_ROUNDS };
}
