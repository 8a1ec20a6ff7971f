import { describe, expect, it } from 'vitest';
import { ASR_FAULTS, LLM_FAULTS, runProviderFaults, TTS_FAULTS } from '../testing/fuzz/provider-faults.ts';
import { Rng } from '../../session/testing/rng.ts';

/**
 * Provider faults end to end, one round of each (`npm run bench -- fuzz` runs more): the model,
 * recognition and synthesis adapters meet 500s, 429s, bad SSE, stalls at each point of a stream,
 * slow bytes and early EOF; each turn must end within its timeouts, with our error code and our
 * words, and the canary sessions beside must not notice.
 */
const seed = Number(process.env.FUZZ_SEED ?? 20_212);

describe(`provider faults (seed ${seed})`, () => {
  it('every fault ends its turn as it must, no leak, no crash, no harm beside', { timeout: 120_000 }, async () => {
    const report = await runProviderFaults(new Rng(seed), 1);
    expect(report.crashDetail).toBe('');
    expect(report.hungTurns).toEqual([]);
    expect(report.wrongOutcomes).toEqual([]);
    expect(report.leaks).toEqual([]);
    expect(report.harmDetail).toEqual([]);
    expect(report.sessionsHarmed).toBe(0);
    const driven = [...Object.keys(LLM_FAULTS).map((f) => `llm:${f}`), ...Object.keys(ASR_FAULTS).map((f) => `asr:${f}`), ...Object.keys(TTS_FAULTS).map((f) => `tts:${f}`)];
    expect([...report.byFault.keys()].sort()).toEqual(driven.sort());
  });
});
