import { describe, expect, it } from 'vitest';
import { SILERO_CONTEXT, SILERO_WINDOW, SileroModel, sileroModelPath } from './silero-model.ts';
import { loadFixture } from './testing/audio-stream.ts';

const WIDTH = SILERO_CONTEXT + SILERO_WINDOW;

describe('SileroModel', () => {
  it('windows go in as PCM16 and the thread scales them: the same probabilities and states as the network fed x / 32768 directly', async () => {
    const ort = await import('onnxruntime-node');
    const direct = await ort.InferenceSession.create(sileroModelPath(), { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });
    const model = await SileroModel.load({ batchWaitMs: 0 });
    // Three consecutive windows of speech, each with its context, through both paths; the
    // recurrent state chains window to window on each side.
    const clip = loadFixture('twelve.wav');
    const expected: number[] = [];
    let directState = new Float32Array(2 * 128);
    const ours: number[] = [];
    const ourState = new Float32Array(2 * 128);
    for (let w = 0; w < 3; w += 1) {
      const window = clip.slice(4000 + w * SILERO_WINDOW, 4000 + w * SILERO_WINDOW + WIDTH);
      const scaled = Float32Array.from(window, (x) => x / 32768);
      const out = await direct.run({
        input: new ort.Tensor('float32', scaled, [1, WIDTH]),
        state: new ort.Tensor('float32', directState, [2, 1, 128]),
        sr: new ort.Tensor('int64', BigInt64Array.from([16000n]), []),
      });
      expected.push((out.output!.data as Float32Array)[0]!);
      directState = Float32Array.from(out.stateN!.data as Float32Array);
      ours.push(await new Promise<number>((done) => model.submit({ input: window, state: ourState, done })));
      expect(ourState).toEqual(directState);
    }
    expect(ours).toEqual(expected);
    // Speech in the clip: not a comparison of two silent answers.
    expect(Math.max(...ours)).toBeGreaterThan(0.5);
    await direct.release();
  });
});
