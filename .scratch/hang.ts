import { ChildServer } from '../bench/lib/child-server.ts';
import { buildCorpus } from '../bench/turn-corpus/corpus.ts';
import { runOverlaps } from '../bench/turn-taking/overlaps.ts';
const corpus = buildCorpus(1);
const server = await ChildServer.start({ env: { LOCAL_LLM_WORD_DELAY_MS: '10', LOG_LEVEL: 'info' }, startTimeoutMs: 90000 });
const clips = corpus.overlaps.slice(0, 48);
try {
  const out = await runOverlaps(server, clips, 6, (n) => console.error('done', n));
  for (const o of out) console.log(o.clip.id, o.interrupted, o.paused, o.intact, o.resumeMs, o.stopMs);
} catch (e) { console.error('FAILED', e); }
await server.stop();
