// A process whose only work is a warm, idle media worker pool (worker-peer.test.ts): it must end
// on its own, as a host application does after server.close().
import { MediaWorkerPool } from '../webrtc/worker-peer.ts';

const pool = new MediaWorkerPool(1);
await pool.warm(30_000);
process.stdout.write(`ready ${pool.ready}\n`);
