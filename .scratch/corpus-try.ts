import { buildCorpus } from '../bench/turn-corpus/corpus.ts';
const t0 = performance.now();
const c = buildCorpus(1);
console.log('turns', c.turns.length, 'overlaps', c.overlaps.length, c.fingerprint, ((performance.now()-t0)/1000).toFixed(1), 's');
const bytes = [...c.turns, ...c.overlaps].reduce((n, x) => n + x.audio.byteLength, 0);
console.log('MB', (bytes/1e6).toFixed(1));
const t1 = performance.now();
const c2 = buildCorpus(0.34);
console.log('small turns', c2.turns.length, 'overlaps', c2.overlaps.length, c2.fingerprint, ((performance.now()-t1)/1000).toFixed(1), 's');
