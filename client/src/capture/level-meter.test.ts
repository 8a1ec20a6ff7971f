import { describe, expect, it } from 'vitest';
import { LevelMeter } from './level-meter.ts';

describe('LevelMeter', () => {
  it('reports peak and RMS dBFS every five frames', () => {
    const readings: Array<{ peak: number; dbfs: number }> = [];
    const meter = new LevelMeter((level) => readings.push(level));
    const frame = (value: number) => new Float32Array(320).fill(value);
    for (let i = 0; i < 4; i += 1) meter.push(frame(0.5));
    expect(readings).toHaveLength(0);
    meter.push(frame(-0.5));
    expect(readings).toHaveLength(1);
    expect(readings[0]!.peak).toBe(0.5);
    expect(readings[0]!.dbfs).toBeCloseTo(20 * Math.log10(0.5), 5);
  });

  it('reads silence as −100 dBFS and starts each reading afresh', () => {
    const readings: Array<{ peak: number; dbfs: number }> = [];
    const meter = new LevelMeter((level) => readings.push(level));
    for (let i = 0; i < 5; i += 1) meter.push(new Float32Array(320).fill(0.9));
    for (let i = 0; i < 5; i += 1) meter.push(new Float32Array(320));
    expect(readings[1]).toEqual({ peak: 0, dbfs: -100 });
  });
});
