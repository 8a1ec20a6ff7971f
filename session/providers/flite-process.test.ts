import { fork } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseWav } from '../../media/pcm.ts';
import { FLITE_HELPER } from './flite-tts.ts';

const SENTENCES = ['Hello there.', 'The quick brown fox jumps over the lazy dog.', 'I can help you with that, what time would you like?', 'Sure.'];

describe('flite helper process', () => {
  // Node 20's WASI made a garbage collection inside its native calls possible (flite-wasi.mjs),
  // which killed the helper with SIGSEGV every few hundred sentences: too rare to catch in a
  // short test, so this checks the cause is gone (no node:wasi, whose first use prints an
  // experimental-feature warning) as well as a run of sentences with no crash.
  it('synthesises sentence after sentence without node:wasi, each a complete WAV', async () => {
    const child = fork(FLITE_HELPER, [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    const lengths = new Map<string, number>();
    try {
      for (let id = 0; id < 30; id += 1) {
        const text = SENTENCES[id % SENTENCES.length]!;
        const reply = await Promise.race([
          new Promise<{ id: number; wav?: Uint8Array; error?: string }>((resolve) => {
            child.once('message', resolve);
            child.send({ id, text, voice: 'kal16' });
          }),
          exited.then((signal) => Promise.reject(new Error(`helper died (${signal}) at sentence ${id}`))),
        ]);
        expect(reply.error).toBeUndefined();
        const { samples, sampleRate } = parseWav(new Uint8Array(reply.wav!));
        expect(sampleRate).toBe(16_000);
        // The same sentence gives the same audio every time: nothing leaks between runs.
        expect(samples.length).toBe(lengths.get(text) ?? samples.length);
        lengths.set(text, samples.length);
      }
      expect(stderr).not.toMatch(/WASI/);
    } finally {
      child.kill();
    }
    expect(await exited).toBe('SIGTERM');
  }, 20_000);
});
