// A stand-in media worker for the pool's start-up tests, speaking the real worker's protocol
// (media-worker-protocol.ts). PARLEY_FIXTURE_WORKER, read from the environment copied at the
// thread's start: `throw` fails its load as a broken install would, `hang` never gets ready,
// anything else says ready and then ignores commands.
import { parentPort } from 'node:worker_threads';

const mode = process.env.PARLEY_FIXTURE_WORKER;
if (mode === 'throw') throw new Error('cannot load werift (fixture)');
// Commands are taken and dropped; the listener also keeps the thread alive.
parentPort.on('message', () => undefined);
if (mode !== 'hang') parentPort.postMessage({ t: 'ready' });
