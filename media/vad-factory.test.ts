import { describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone } from './testing/audio-stream.ts';
import { vadFrames } from './testing/vad-frames.ts';
import type { SileroFactory } from './silero-vad.ts';
import { loadVadFactory } from './vad-factory.ts';

/**
 * VAD_PROVIDER=webrtc loads fvad: unlike Silero (silero-vad.test.ts), it calls a cough and a
 * steady tone speech, which is why a session on fvad pauses its reply for them
 * (session/voice/false-interruption.test.ts).
 */
describe('loadVadFactory', () => {
  it("'webrtc' is fvad at the aggressiveness asked for: speech, a cough and a tone are voiced, room tone is not", async () => {
    const fvad = await loadVadFactory('webrtc', { aggressiveness: 3 });
    expect(fvad.provider).toBe('webrtc');
    const voiced = async (clip: Int16Array): Promise<number> => (await vadFrames(fvad, clip)).filter((f) => f.speech).length;
    expect(await voiced(concat(roomTone(200), loadFixture('twelve.wav'), roomTone(400)))).toBeGreaterThan(20);
    expect(await voiced(loadFixture('cough.wav'))).toBeGreaterThan(0);
    expect(await voiced(loadFixture('tone.wav'))).toBeGreaterThan(0);
    expect(await voiced(roomTone(1000))).toBe(0);
  });

  it("'silero' has its quiet gate only when asked (SILERO_QUIET_GATE): a quiet room costs the network 16 windows instead of all", async () => {
    for (const quietGate of [false, true]) {
      const silero = (await loadVadFactory('silero', { quietGate })) as SileroFactory;
      const frames = await vadFrames(silero, roomTone(2000));
      expect(frames.some((f) => f.speech)).toBe(false);
      // 2 s is 62 windows, and vadFrames' 40 ms tail fills one more.
      expect(silero.quietWindows + silero.model.windows).toBe(63);
      expect(silero.model.windows).toBe(quietGate ? 16 : 63);
    }
  });
});
