// The Silero inference thread: one onnxruntime session, batch after batch. onnxruntime-node's
// run() is synchronous native work inside a setImmediate on whatever thread calls it; on the main
// thread it took a third of the event loop at 100 voice sessions, so it runs here. Messages: see
// silero-thread.ts.
import { parentPort, workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';

const port = parentPort;
let session;
try {
  // One intra-op thread: the batch is small and the process shares its cores with the calls.
  session = await ort.InferenceSession.create(workerData.modelPath, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  });
  port.postMessage({ t: 'ready' });
} catch (error) {
  port.postMessage({ t: 'load-failed', error: String(error?.message ?? error) });
  process.exit(1);
}
const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);

port.on('message', async ({ id, batch, width, input, state }) => {
  try {
    const out = await session.run({
      input: new ort.Tensor('float32', input, [batch, width]),
      state: new ort.Tensor('float32', state, [2, batch, 128]),
      sr,
    });
    // Copies (memcpy, not Float32Array.from's per-element iteration): the output tensors' memory
    // belongs to the runtime and cannot be transferred.
    const probabilities = out.output.data.slice();
    const next = out.stateN.data.slice();
    port.postMessage({ t: 'done', id, probabilities, state: next }, [probabilities.buffer, next.buffer]);
  } catch (error) {
    port.postMessage({ t: 'failed', id, error: String(error?.message ?? error) });
  }
});
