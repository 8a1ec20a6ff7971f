import { describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone } from '../../../media/testing/audio-stream.ts';
import { Decoder } from './decoder.mjs';

/**
 * The word lattice mid-segment, on Debian's real pocketsphinx. Past the 256 frames its
 * backpointer index starts with, ps_get_lattice reads memory no search has written yet and
 * segfaults (the old decoder died in this very test, at the pause after 3.3 s of speech), so a
 * decoder builds a lattice mid-segment only as far as a segment before it has reached.
 */
describe('the word lattice mid-segment', () => {
  const story = loadFixture('story.wav');
  const SLICE = 2048;
  /** The last word's posterior after each 128 ms slice, the way the recogniser thread is asked. */
  function posteriors(decoder: Decoder, audio: Int16Array): Array<number | undefined> {
    decoder.start();
    const out: Array<number | undefined> = [];
    for (let i = 0; i < audio.length; i += SLICE) {
      decoder.process(audio.slice(i, i + SLICE));
      out.push(decoder.lastWord()?.posterior);
    }
    decoder.end();
    return out;
  }
  // "please tell me a long story about a dragon who lived in", then a 200 ms pause: one segment.
  const cut = concat(story.subarray(0, 3300 * 16), roomTone(200));

  it('a fresh decoder asked at every slice of a first long segment stays up, and gives no posterior past its first 2.5 s', () => {
    const decoder = new Decoder();
    const fresh = posteriors(decoder, cut);
    // Early in the segment the lattice is there ("tell me" at 0.77 s).
    expect(fresh.slice(0, 8).some((p) => p !== undefined)).toBe(true);
    expect(fresh.at(-1)).toBeUndefined();
    // Once a longer segment has been searched (the whole story, ended), the same pause has one.
    posteriors(decoder, concat(story, roomTone(600)));
    const after = posteriors(decoder, cut).at(-1);
    expect(after).toBeGreaterThan(0.1);
    expect(after).toBeLessThanOrEqual(1);
  });
});
