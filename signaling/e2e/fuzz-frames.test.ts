import { describe, expect, it } from 'vitest';
import { runFrameFuzz } from '../testing/fuzz/frame-fuzz.ts';
import { CLIENT_FRAME_TYPES } from '../testing/fuzz/frames.ts';
import { MUTATIONS } from '../testing/fuzz/mutations.ts';

/**
 * The frame fuzzer in its bounded form (`npm run bench -- fuzz` runs it at full size): every
 * client frame type through every mutation (schema breaks, other types' shapes, deep and huge
 * JSON, truncated text, invalid UTF-8, binary where text belongs, oversize), then random
 * mutated and valid frames, in text and voice sessions, against the server in its own process,
 * with canary sessions conversing beside them. FUZZ_SEED reproduces a run.
 */
const seed = Number(process.env.FUZZ_SEED ?? 20_211);

describe(`frame fuzzing (seed ${seed})`, () => {
  it('no crash, no hung turn, no harm to the sessions beside, every fuzzed session still answers', { timeout: 120_000 }, async () => {
    const report = await runFrameFuzz({ seed, textClients: 3, voiceClients: 1, framesPerClient: 600, requests: 200 });
    expect(report.crashDetail).toBe('');
    expect(report.crashes).toBe(0);
    expect(report.internalErrors).toBe(0);
    expect(report.stderr).toBe('');
    expect(report.requestsSent).toBe(200);
    expect(report.hungTurns).toBe(0);
    expect(report.harmDetail).toEqual([]);
    expect(report.sessionsHarmed).toBe(0);
    expect(report.canaryTurns).toBeGreaterThan(0);
    expect(report.fuzzedAliveAtEnd).toBe(report.fuzzedSessions);
    expect(report.drainExit).toBe(0);
    expect(report.framesSent).toBeGreaterThanOrEqual(2400);
    // The sweep reached every frame type with every mutation, and the server answered in kind.
    const missing = CLIENT_FRAME_TYPES.flatMap((type) => MUTATIONS.map((m) => `${type}:${m}`)).filter((k) => !report.byKind.has(k));
    expect(missing).toEqual([]);
    expect(report.byKind.get('audio')).toBeGreaterThan(0);
    for (const code of ['invalid_frame', 'invalid_json', 'unknown_frame_type']) expect(report.errorCodes.get(code), code).toBeGreaterThan(0);
    // Invalid UTF-8 and frames past the hard cap end their socket; the client comes back.
    expect(report.closeCodes.get(1007)).toBeGreaterThan(0);
    expect(report.closeCodes.get(1009)).toBeGreaterThan(0);
    expect(report.resumes).toBeGreaterThan(0);
  });
});
