// A process whose Silero thread is in the middle of a batch when it exits (silero-vad.test.ts):
// 100 detectors fed every 5 ms, then process.exit after EXIT_AFTER_MS.
import { createSileroFactory } from '../silero-vad.ts';

const factory = await createSileroFactory();
const detectors = Array.from({ length: 100 }, () => factory.create(() => undefined));
setInterval(() => {
  for (const detector of detectors) detector.push(new Int16Array(320));
}, 5);
setTimeout(() => process.exit(0), Number(process.env.EXIT_AFTER_MS ?? 300));
