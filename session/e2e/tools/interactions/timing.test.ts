import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../../signaling/config.ts';
import { interactionTiming } from '../../../tools/interactions/timing.ts';

/** INTERACTION_QUEUE_DEADLINE_S (default 10, fractions allowed) and INTERACTION_QUEUE_DEADLINE_ROUNDS (default 3). */
describe('interaction queue settings', () => {
  it('defaults: a 10 s watchdog, 3 rounds', () => {
    const config = loadConfig({});
    expect(config.INTERACTION_QUEUE_DEADLINE_S).toBe(10);
    expect(config.INTERACTION_QUEUE_DEADLINE_ROUNDS).toBe(3);
    expect(interactionTiming(config)).toEqual({ deadlineMs: 10000, rounds: 3 });
  });

  it('fractional seconds are accepted (tests use 0.3)', () => {
    const config = loadConfig({ INTERACTION_QUEUE_DEADLINE_S: '0.3', INTERACTION_QUEUE_DEADLINE_ROUNDS: '5' });
    expect(interactionTiming(config)).toEqual({ deadlineMs: 300, rounds: 5 });
  });

  it.each([
    ['INTERACTION_QUEUE_DEADLINE_S', '0'],
    ['INTERACTION_QUEUE_DEADLINE_S', 'soon'],
    ['INTERACTION_QUEUE_DEADLINE_ROUNDS', '0'],
    ['INTERACTION_QUEUE_DEADLINE_ROUNDS', '1.5'],
  ])('%s=%s stops the start with a message naming it', (key, value) => {
    expect(() => loadConfig({ [key]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [key]: value })).toThrow(key);
  });
});
