// A process that exits while its Silero thread is still loading the model (silero-vad.test.ts):
// a server stopped right after it started.
import { sileroThread } from '../silero-thread.ts';
import { sileroModelPath } from '../silero-model.ts';

void sileroThread(sileroModelPath());
setTimeout(() => process.exit(0), Number(process.env.EXIT_AFTER_MS ?? 80));
