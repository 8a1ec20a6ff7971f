import { ChildServer } from '../bench/lib/child-server.ts';
import { buildCorpus } from '../bench/turn-corpus/corpus.ts';
import { runOverlaps } from '../bench/turn-taking/overlaps.ts';
const corpus = buildCorpus(1);
const server = await ChildServer.start({ env: { LOCAL_LLM_WORD_DELAY_MS: '10', LOG_LEVEL: 'info', VAD_PROVIDER: process.env.P ?? 'webrtc', BARGE_IN_CONFIRM: process.env.C ?? 'immediate' }, startTimeoutMs: 90000 });
const clips = corpus.overlaps.slice(Number(process.env.FROM ?? 0), Number(process.env.TO ?? 120));
try {
  const out = await runOverlaps(server, clips, 6, (n) => console.error('done', n));
  console.log('outcomes', out.length);
} catch (e) { console.error('FAILED', e); }
console.error('STDERR TAIL', (server as unknown as { stderrTail: string[] }).stderrTail.join('').slice(-3000));
await server.stop().catch((e) => console.error('stop failed', e));
