import { describe, expect, it } from 'vitest';
import { newTurnId, randomId } from './ids.ts';

describe('ids', () => {
  it('are the prefix and base64url of the asked number of bytes', () => {
    expect(newTurnId()).toMatch(/^turn_[A-Za-z0-9_-]{8}$/);
    expect(randomId('rt', 32)).toMatch(/^rt_[A-Za-z0-9_-]{43}$/);
    expect(randomId('big', 5000)).toHaveLength(4 + Math.ceil((5000 * 4) / 3));
  });

  it('never repeat across many pool refills, whatever the sizes asked', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i += 1) seen.add(randomId('x', [6, 9, 32][i % 3]));
    expect(seen.size).toBe(20_000);
  });
});
