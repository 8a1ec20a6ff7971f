import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone } from '../../media/testing/audio-stream.ts';
import { PocketsphinxSpeechToText } from './pocketsphinx-asr.ts';

/**
 * The warm recogniser through its real worker and Debian's pocketsphinx: one decoder kept loaded
 * transcribes utterance after utterance, concurrent utterances never swap transcripts, and a
 * partial hypothesis is available while the user speaks.
 */

const EXPECTED: Record<string, string> = {
  'twelve.wav': 'what is twelve times seven',
  'weather.wav': 'what is the weather like in paris today',
  'name.wav': 'my name is robert',
};

let stt: PocketsphinxSpeechToText;
beforeAll(async () => {
  stt = new PocketsphinxSpeechToText(1);
  await stt.whenReady();
}, 20_000);
afterAll(async () => {
  await stt.close();
});

/** Feeds a clip in 20 ms frames, as the voice pipeline does. */
function feed(stream: { write(samples: Int16Array): void }, samples: Int16Array): void {
  for (let i = 0; i < samples.length; i += 320) stream.write(samples.subarray(i, i + 320));
}

describe('PocketsphinxSpeechToText (warm decoders in a worker)', () => {
  it('transcribes utterance after utterance on the same loaded decoder', async () => {
    for (const [clip, text] of [...Object.entries(EXPECTED), ...Object.entries(EXPECTED)]) {
      const stream = stt.open();
      feed(stream, concat(roomTone(200), loadFixture(clip), roomTone(300)));
      expect(await stream.finish()).toBe(text);
    }
  });

  it('keeps concurrent utterances apart, adding decoders as needed', async () => {
    const clips = Object.keys(EXPECTED);
    const streams = clips.map(() => stt.open());
    // Interleaved frame by frame, like three sessions talking at once.
    const audio = clips.map((clip) => concat(loadFixture(clip), roomTone(300)));
    for (let i = 0; i < Math.max(...audio.map((a) => a.length)); i += 320) audio.forEach((a, n) => streams[n]!.write(a.subarray(i, i + 320)));
    const texts = await Promise.all(streams.map((s) => s.finish()));
    expect(texts).toEqual(clips.map((clip) => EXPECTED[clip]));
  });

  it('offers a partial transcript of the utterance so far', async () => {
    const stream = stt.open();
    const clip = loadFixture('weather.wav');
    feed(stream, clip.subarray(0, Math.floor(clip.length * 0.6)));
    const partial = await stream.partial();
    expect(partial.length).toBeGreaterThan(0);
    expect('what is the weather like in paris today'.startsWith(partial.split(' ').slice(0, 2).join(' '))).toBe(true);
    feed(stream, concat(clip.subarray(Math.floor(clip.length * 0.6)), roomTone(300)));
    expect(await stream.finish()).toBe('what is the weather like in paris today');
    expect(await stream.partial()).toBe('');
  });

  it('gives its posterior for the last word heard so far: none before a word or after the end, low for a word cut off', async () => {
    const clip = loadFixture('weather.wav');
    const whole = stt.open();
    feed(whole, roomTone(300));
    expect(await whole.lastWordPosterior()).toBeUndefined();
    feed(whole, concat(clip, roomTone(160)));
    const today = await whole.lastWordPosterior();
    // Asking does not disturb the decoding.
    expect(await whole.finish()).toBe('what is the weather like in paris today');
    expect(await whole.lastWordPosterior()).toBeUndefined();
    // Cut inside "weather": pocketsphinx hears "what is to what", and doubts that last "what".
    const cut = stt.open();
    feed(cut, concat(roomTone(200), clip.subarray(0, Math.floor(clip.length * 0.3)), roomTone(160)));
    const what = await cut.lastWordPosterior();
    cut.abort();
    expect(today).toBeGreaterThan(0.3);
    expect(today).toBeLessThanOrEqual(1);
    expect(what).toBeGreaterThanOrEqual(0);
    expect(what).toBeLessThan(0.1);
  });

  it("gives its language model's probability that the sentence ends after the words so far: none before a word or after the end", async () => {
    const clip = loadFixture('weather.wav');
    const whole = stt.open();
    feed(whole, roomTone(300));
    expect(await whole.sentenceEndProbability()).toBeUndefined();
    feed(whole, concat(clip, roomTone(160)));
    const [words, today] = [await whole.partial(), await whole.sentenceEndProbability()];
    expect(await whole.finish()).toBe('what is the weather like in paris today');
    expect(await whole.sentenceEndProbability()).toBeUndefined();
    // Cut inside "the weather": pocketsphinx hears "what is to", which a sentence rarely ends on.
    const cut = stt.open();
    feed(cut, concat(roomTone(200), clip.subarray(0, Math.floor(clip.length * 0.25)), roomTone(160)));
    const cutEnd = await cut.sentenceEndProbability();
    cut.abort();
    expect(words).toMatch(/ paris today$/);
    expect(today).toBeGreaterThan(0.1);
    expect(today).toBeLessThanOrEqual(1);
    expect(cutEnd).toBeGreaterThanOrEqual(0);
    expect(cutEnd).toBeLessThan(0.1);
  });

  it('an aborted utterance yields nothing and frees its decoder; noise yields an empty transcript', async () => {
    const aborted = stt.open();
    feed(aborted, loadFixture('name.wav'));
    aborted.abort();
    const noise = stt.open();
    feed(noise, concat(roomTone(400), loadFixture('click.wav'), roomTone(400)));
    expect(await noise.finish()).toBe('');
    const next = stt.open();
    feed(next, concat(loadFixture('name.wav'), roomTone(300)));
    expect(await next.finish()).toBe('my name is robert');
  });

  it('with no warm recogniser (ASR_WARM_PROCESSES=0) is ready at once and loads one for the first utterance', async () => {
    const cold = new PocketsphinxSpeechToText(0);
    try {
      await cold.whenReady();
      const stream = cold.open();
      feed(stream, concat(loadFixture('name.wav'), roomTone(300)));
      expect(await stream.finish()).toBe('my name is robert');
    } finally {
      await cold.close();
    }
  });

  it('decodes with the search settings it is given (benchmarks compare them): a flag pocketsphinx rejects fails the utterance', async () => {
    const rejected = new PocketsphinxSpeechToText(0, ['-no_such_setting', '1']);
    const other = new PocketsphinxSpeechToText(0, ['-maxhmmpf', '2000', '-maxwpf', '10']);
    try {
      const failing = rejected.open();
      feed(failing, concat(loadFixture('name.wav'), roomTone(300)));
      await expect(failing.finish()).rejects.toThrow('the recogniser stopped');
      const stream = other.open();
      feed(stream, concat(loadFixture('name.wav'), roomTone(300)));
      expect(await stream.finish()).toBe('my name is robert');
    } finally {
      await Promise.all([rejected.close(), other.close()]);
    }
  });
});

describe('a process that ends while its recognisers are inside libpocketsphinx', () => {
  /** Runs session/testing/pocketsphinx-exit.ts; several at once, which starves their loads a little. */
  function run(env: Record<string, string>): Promise<{ env: Record<string, string>; status: number | null; stderr: string }> {
    const script = fileURLToPath(new URL('../testing/pocketsphinx-exit.ts', import.meta.url));
    return new Promise((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, ...env }, timeout: 30_000 }, (error, _stdout, stderr) => {
        resolve({ env, status: error ? ((error as { code?: number }).code ?? null) : 0, stderr: stderr.slice(0, 200) });
      });
    });
  }

  it('a closed recogniser frees its models: resident memory stays flat over recognisers opened, used and closed', async () => {
    // Each decoder holds ≈ 95 MB; a thread that exited without freeing it (the idle reaper's
    // close) left it allocated for good: +380 MB over these cycles before the fix.
    const cycle = async (): Promise<void> => {
      const own = new PocketsphinxSpeechToText(1);
      await own.whenReady();
      const stream = own.open();
      feed(stream, concat(roomTone(200), loadFixture('name.wav'), roomTone(300)));
      expect(await stream.finish()).toBe(EXPECTED['name.wav']);
      await own.close();
    };
    await cycle();
    const before = process.memoryUsage().rss;
    for (let i = 0; i < 4; i += 1) await cycle();
    expect((process.memoryUsage().rss - before) / 1e6).toBeLessThan(120);
  }, 90_000);

  it('exits cleanly during the model load, after close() during it, and during a decode (koffi aborted with exit 134)', async () => {
    // A model loads in ~0.4-0.9 s: these exits land inside the load, or (60-150 ms) inside the
    // loading of koffi's native addon, which aborted 4 times in 340 while it ran unguarded; close()
    // used to terminate a thread still loading after 1 s; the decode exits land inside the last
    // frames' search.
    const runs = [
      ...[60, 100, 150, 450].map((ms) => ({ MODE: 'exit', EXIT_AFTER_MS: String(ms) })),
      { MODE: 'close' },
      { MODE: 'decode', EXIT_AFTER_MS: '0' },
    ];
    const results = await Promise.all(runs.map(run));
    expect(results).toEqual(runs.map((env) => ({ env, status: 0, stderr: '' })));
  }, 60_000);
});
