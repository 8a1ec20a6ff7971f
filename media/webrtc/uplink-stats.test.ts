import { afterEach, describe, expect, it } from 'vitest';
import { setMediaStatsHooks } from '../media-stats.ts';
import { UplinkStats } from './uplink-stats.ts';

describe('UplinkStats (RFC 3550 interarrival jitter and losses)', () => {
  const jitter: number[] = [];
  let lost = 0;
  setMediaStatsHooks({ uplinkJitter: (ms) => jitter.push(ms), uplinkLost: () => (lost += 1) });
  afterEach(() => {
    jitter.length = 0;
    lost = 0;
  });

  it('reports each loss at once, and no jitter for packets arriving exactly at their spacing', () => {
    const stats = new UplinkStats();
    stats.lost();
    stats.lost();
    expect(lost).toBe(2);
    // 960 ticks (20 ms at 48 kHz) apart, arriving 20 ms apart, across the 32-bit timestamp wrap.
    for (let i = 0; i < 100; i += 1) stats.arrived((0xffffff00 + i * 960) >>> 0, i * 20);
    expect(jitter).toEqual([0, 0]);
  });

  it('converges on the mean deviation of arrival spacing, reported once per 50 packets', () => {
    const stats = new UplinkStats();
    // Alternating 15 and 25 ms arrival gaps: every deviation is 5 ms.
    let at = 0;
    for (let i = 0; i < 200; i += 1) {
      stats.arrived(i * 960, at);
      at += i % 2 === 0 ? 15 : 25;
    }
    expect(jitter.length).toBe(4);
    expect(jitter.at(-1)!).toBeCloseTo(5, 3);
  });
});
