import { describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone } from '../../../media/testing/audio-stream.ts';
import { Decoder } from './decoder.mjs';

/**
 * The word lattice mid-segment, on Debian's real pocketsphinx (lattice-bound.mjs). ps_get_lattice
 * reads one backpointer-index entry past the search; left as it was, that entry came from
 * whatever the pooled recogniser decoded before (the lattice's end word and its posterior moved
 * with it, and most queries got no lattice at all) and, past every earlier segment, from
 * uninitialised memory, where it segfaulted (the old decoder died in this very test, at the pause
 * after 3.3 s of speech).
 */
describe('the word lattice mid-segment', () => {
  const SLICE = 2048;
  /** The words and the last word's posterior after each 128 ms slice, the way the recogniser thread is asked. */
  function decode(decoder: Decoder, audio: Int16Array): { text: string; posteriors: Array<number | undefined> } {
    decoder.start();
    const posteriors: Array<number | undefined> = [];
    for (let i = 0; i < audio.length; i += SLICE) {
      decoder.process(audio.slice(i, i + SLICE));
      posteriors.push(decoder.lastWord()?.posterior);
    }
    return { text: decoder.end(), posteriors };
  }
  const story = loadFixture('story.wav');
  // "please tell me a long story about a dragon who lived in", then a 200 ms pause: one segment.
  const cut = concat(story.subarray(0, 3300 * 16), roomTone(200));

  it('is there at every slice of a first long segment once a word is heard, past the 256 frames the index starts with', () => {
    const { posteriors } = decode(new Decoder(), cut);
    const first = posteriors.findIndex((p) => p !== undefined);
    expect(first).toBeGreaterThanOrEqual(0);
    expect(first).toBeLessThan(8);
    // At most one slice can end exactly where the index is full (the search grows it at the next frame).
    expect(posteriors.slice(first).filter((p) => p === undefined).length).toBeLessThanOrEqual(1);
    expect(posteriors.at(-1)).toBeGreaterThan(0);
    expect(posteriors.at(-1)).toBeLessThanOrEqual(1);
  });

  it('gives the same words and posteriors whatever the recogniser decoded before (another session, on a pooled recogniser)', () => {
    const before = [concat(loadFixture('twelve.wav'), roomTone(300)), loadFixture('noise.wav')];
    for (const name of ['okay.wav', 'yeah.wav']) {
      const audio = concat(loadFixture(name), roomTone(400));
      const fresh = decode(new Decoder(), audio);
      const used = new Decoder();
      for (const audio of before) decode(used, audio);
      const again = decode(used, audio);
      expect(again.text).toBe(fresh.text);
      expect(again.posteriors.map((p) => p === undefined)).toEqual(fresh.posteriors.map((p) => p === undefined));
      // ps_start_stream resets the noise statistics only; what stays moves a posterior by 1e-4 here (up to 1.1e-3 on the turn corpus).
      again.posteriors.forEach((p, i) => expect(Math.abs((p ?? 0) - (fresh.posteriors[i] ?? 0))).toBeLessThan(0.001));
    }
  });
});
