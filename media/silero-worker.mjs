// The Silero inference thread: one onnxruntime session, batch after batch. onnxruntime-node's
// run() is synchronous native work inside a setImmediate on whatever thread calls it; on the main
// thread it took a third of the event loop at 100 voice sessions, so it runs here. Messages: see
// silero-thread.ts.
import { parentPort, workerData } from 'node:worker_threads';

const port = parentPort;
// [busy, stopping] (native-thread-guard.ts): while the process exits no import, load or run starts,
// and the exit waits for busy to clear. onnxruntime aborts the process when the thread is torn
// down in the middle of any of them.
const control = workerData.control;
const idle = () => {
  Atomics.store(control, 0, 0);
  Atomics.notify(control, 0);
};
Atomics.store(control, 0, 1);
if (Atomics.load(control, 1) === 1) {
  idle();
  process.exit(0);
}
// Imported only now, under busy: loading onnxruntime's native addon is as fatal to interrupt as
// a model load (a process that exited 40 ms after starting the thread aborted with Napi::Error).
let ort;
let session;
try {
  ort = await import('onnxruntime-node');
  // One intra-op thread: the batch is small and the process shares its cores with the calls.
  session = await ort.InferenceSession.create(workerData.modelPath, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  });
} catch (error) {
  idle();
  port.postMessage({ t: 'load-failed', error: String(error?.message ?? error) });
  process.exit(1);
}
idle();
port.postMessage({ t: 'ready' });
const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);

port.on('message', async ({ id, batch, width, input, state }) => {
  // busy before the stopping check (the exit sets them the other way round): one of the two sees the other.
  Atomics.store(control, 0, 1);
  if (Atomics.load(control, 1) === 1) return idle();
  // The batch fills the arrays' starts; the arrays go back with the answer to be used again.
  const batchState = state.subarray(0, 2 * batch * 128);
  // The windows come as PCM16 values (silero-model.ts): scaled to ±1 here, off the event loop.
  // A power of two: the float32 result is exact, the same as scaling each sample before.
  const batchInput = input.subarray(0, batch * width);
  for (let i = 0; i < batchInput.length; i += 1) batchInput[i] *= 1 / 32768;
  try {
    const out = await session.run({
      input: new ort.Tensor('float32', batchInput, [batch, width]),
      state: new ort.Tensor('float32', batchState, [2, batch, 128]),
      sr,
    });
    // The output tensors' memory belongs to the runtime and cannot be transferred: the next
    // state is copied into the state array, the probabilities (a few floats) into a new one.
    batchState.set(out.stateN.data);
    const probabilities = out.output.data.slice();
    port.postMessage({ t: 'done', id, probabilities, input, state }, [probabilities.buffer, input.buffer, state.buffer]);
  } catch (error) {
    port.postMessage({ t: 'failed', id, error: String(error?.message ?? error) });
  } finally {
    idle();
  }
});
