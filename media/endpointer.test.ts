import { describe, expect, it } from 'vitest';
import { Endpointer, endpointerOptions, silenceMsForThreshold, type EndpointerOptions, type TurnCue } from './endpointer.ts';
import { createFvadFactory } from './fvad-vad.ts';
import { rmsDbfs } from './pcm.ts';
import { createSileroFactory } from './silero-vad.ts';
import { VAD_FRAME_MS, type VadFactory } from './vad.ts';
import { concat, loadFixture, roomTone, silence } from './testing/audio-stream.ts';
import { vadFrames } from './testing/vad-frames.ts';

const factories: Record<string, () => Promise<VadFactory>> = { webrtc: () => createFvadFactory(3), silero: () => createSileroFactory() };

/** Runs a clip (with room tone around it) through a real VAD and the endpointer; turn ends in ms after the end of speech. */
/**
 * `recheckChanged`, `posterior`, `sentenceEnd`: what the recheck answers, at once (the words
 * changed or not, the last word's posterior, the language model's sentence-end probability).
 */
async function endsAfterSpeech(vad: VadFactory, clip: Int16Array, options: EndpointerOptions, cueAt?: { afterProbeMs: number; cue: TurnCue }, recheckChanged = false, posterior?: number, sentenceEnd?: number): Promise<number[]> {
  const endpointer = new Endpointer(options);
  const audio = concat(roomTone(300), clip, roomTone(3000));
  const speechEndMs = 300 + clip.length / 16;
  const ends: number[] = [];
  let probeAt: number | undefined;
  for (const [i, { frame, speech }] of (await vadFrames(vad, audio)).entries()) {
    const now = (i + 1) * VAD_FRAME_MS;
    if (cueAt && probeAt !== undefined && now - probeAt >= cueAt.afterProbeMs) endpointer.setCue(cueAt.cue);
    for (const event of endpointer.push(frame, speech, rmsDbfs(frame))) {
      if (event.type === 'pause_probe') probeAt = now;
      if (event.type === 'pause_recheck') endpointer.setRecheck(recheckChanged, posterior, sentenceEnd);
      if (event.type === 'turn_end') ends.push(now - speechEndMs);
    }
  }
  return ends;
}

const plain = (threshold?: number): EndpointerOptions => endpointerOptions(threshold, false, false);

describe('endpointer', () => {
  it('maps turn_end_threshold monotonically onto trailing silence (lower waits longer)', () => {
    expect(silenceMsForThreshold(0.05)).toBe(740);
    expect(silenceMsForThreshold()).toBe(260);
    expect(silenceMsForThreshold(0.5)).toBe(200);
    for (let k = 1; k < 10; k += 1) expect(silenceMsForThreshold(k / 20)).toBeGreaterThan(silenceMsForThreshold((k + 1) / 20));
  });

  describe.each(Object.keys(factories))('with the %s VAD', (name) => {
    let vad: VadFactory;
    it.each(['twelve.wav', 'weather.wav', 'name.wav', 'story.wav'])('at the default, %s ends within 340 ms of the end of speech', async (clip) => {
      vad ??= await factories[name]!();
      const ends = await endsAfterSpeech(vad, loadFixture(clip), plain());
      expect(ends).toHaveLength(1);
      expect(ends[0]).toBeGreaterThanOrEqual(240);
      expect(ends[0]).toBeLessThanOrEqual(340);
    });

    it('at the default, a 220 ms pause inside a sentence does not end the turn', async () => {
      vad ??= await factories[name]!();
      expect(await endsAfterSpeech(vad, loadFixture('order-pause.wav'), plain())).toHaveLength(1);
    });

    it('waits longer at 0.05 and shorter at 0.5', async () => {
      vad ??= await factories[name]!();
      const [slow] = await endsAfterSpeech(vad, loadFixture('twelve.wav'), plain(0.05));
      const [fast] = await endsAfterSpeech(vad, loadFixture('twelve.wav'), plain(0.5));
      expect(slow).toBeGreaterThan(700);
      expect(fast).toBeLessThan(280);
    });

    it('digital silence after speech ends the turn the same way', async () => {
      vad ??= await factories[name]!();
      const endpointer = new Endpointer(plain());
      let ended = 0;
      for (const { frame, speech } of await vadFrames(vad, concat(silence(200), loadFixture('name.wav'), silence(1000)))) {
        ended += endpointer.push(frame, speech, rmsDbfs(frame)).filter((e) => e.type === 'turn_end').length;
      }
      expect(ended).toBe(1);
    });

    it('a trailing-off cue stretches the wait to 5× the silence (1,300 ms at the default); a question cue shortens it to 0.6×', async () => {
      vad ??= await factories[name]!();
      const options = endpointerOptions();
      expect(options.incompleteSilenceMs).toBe(1300);
      const [incomplete] = await endsAfterSpeech(vad, loadFixture('twelve.wav'), options, { afterProbeMs: 60, cue: 'incomplete' });
      const [question] = await endsAfterSpeech(vad, loadFixture('twelve.wav'), options, { afterProbeMs: 20, cue: 'question' });
      expect(incomplete).toBeGreaterThanOrEqual(options.incompleteSilenceMs);
      expect(incomplete).toBeLessThanOrEqual(options.incompleteSilenceMs + 100);
      expect(question).toBeGreaterThanOrEqual(options.questionSilenceMs);
      expect(question).toBeLessThan(options.endSilenceMs);
    });

    it('words that changed at the recheck (60 ms after the probe) hold the pause as incomplete, even after a question cue', async () => {
      vad ??= await factories[name]!();
      const options = endpointerOptions();
      expect(options.recheckSilenceMs).toBe(160);
      const [steady] = await endsAfterSpeech(vad, loadFixture('twelve.wav'), options, { afterProbeMs: 20, cue: 'question' }, false);
      const [changed] = await endsAfterSpeech(vad, loadFixture('twelve.wav'), options, { afterProbeMs: 20, cue: 'question' }, true);
      expect(steady).toBeLessThan(options.endSilenceMs);
      expect(changed).toBeGreaterThanOrEqual(options.incompleteSilenceMs);
      expect(changed).toBeLessThanOrEqual(options.incompleteSilenceMs + 100);
      // Without the lexical cue there is no recheck.
      expect(plain().recheckSilenceMs).toBe(0);
    });

    it('a last word the recogniser doubts at the recheck (posterior under 0.2) holds the pause as incomplete; a sure one, or none, does not', async () => {
      vad ??= await factories[name]!();
      const options = endpointerOptions();
      expect(options.minLastWordPosterior).toBe(0.2);
      const twelve = loadFixture('twelve.wav');
      const [doubted] = await endsAfterSpeech(vad, twelve, options, { afterProbeMs: 20, cue: 'neutral' }, false, 0.05);
      const [doubtedQuestion] = await endsAfterSpeech(vad, twelve, options, { afterProbeMs: 20, cue: 'question' }, false, 0.19);
      const [sure] = await endsAfterSpeech(vad, twelve, options, { afterProbeMs: 20, cue: 'neutral' }, false, 0.2);
      const [unknown] = await endsAfterSpeech(vad, twelve, options, { afterProbeMs: 20, cue: 'neutral' }, false, undefined);
      for (const held of [doubted, doubtedQuestion]) {
        expect(held).toBeGreaterThanOrEqual(options.incompleteSilenceMs);
        expect(held).toBeLessThanOrEqual(options.incompleteSilenceMs + 100);
      }
      for (const ended of [sure, unknown]) {
        expect(ended).toBeGreaterThanOrEqual(options.endSilenceMs);
        expect(ended).toBeLessThan(options.endSilenceMs + 100);
      }
      // Off (0), or without the lexical cue, the posterior changes nothing.
      const [off] = await endsAfterSpeech(vad, twelve, { ...options, minLastWordPosterior: 0 }, { afterProbeMs: 20, cue: 'neutral' }, false, 0.05);
      expect(off).toBeLessThan(options.endSilenceMs + 100);
      expect(plain().minLastWordPosterior).toBe(0);
    });

    it('words a sentence rarely ends on at the recheck (sentence-end probability under 0.12) hold the pause, even with a sure last word; likely ends do not', async () => {
      vad ??= await factories[name]!();
      const options = endpointerOptions();
      expect(options.minSentenceEndProbability).toBe(0.12);
      const twelve = loadFixture('twelve.wav');
      // "could you tell me they": the recogniser is fairly sure of "they" (0.29), its model is not (0.002).
      const [unfinished] = await endsAfterSpeech(vad, twelve, options, { afterProbeMs: 20, cue: 'neutral' }, false, 0.29, 0.002);
      const [unfinishedQuestion] = await endsAfterSpeech(vad, twelve, options, { afterProbeMs: 20, cue: 'question' }, false, 0.9, 0.119);
      // "thank you" 0.32; and a recogniser without a language model.
      const [finished] = await endsAfterSpeech(vad, twelve, options, { afterProbeMs: 20, cue: 'neutral' }, false, 0.29, 0.32);
      const [unknown] = await endsAfterSpeech(vad, twelve, options, { afterProbeMs: 20, cue: 'neutral' }, false, 0.29, undefined);
      for (const held of [unfinished, unfinishedQuestion]) {
        expect(held).toBeGreaterThanOrEqual(options.incompleteSilenceMs);
        expect(held).toBeLessThanOrEqual(options.incompleteSilenceMs + 100);
      }
      expect(finished).toBeGreaterThanOrEqual(options.endSilenceMs);
      expect(finished).toBeLessThan(options.endSilenceMs + 100);
      expect(unknown).toBeLessThan(options.endSilenceMs + 100);
      // Off (0), or without the lexical cue, the probability changes nothing.
      const [off] = await endsAfterSpeech(vad, twelve, { ...options, minSentenceEndProbability: 0 }, { afterProbeMs: 20, cue: 'neutral' }, false, 0.29, 0.002);
      expect(off).toBeLessThan(options.endSilenceMs + 100);
      expect(plain().minSentenceEndProbability).toBe(0);
    });

    it('a doubted or revised last word does not hold the pause when the words make a likely sentence end (0.2 or more); under that it still does', async () => {
      vad ??= await factories[name]!();
      const options = endpointerOptions();
      expect(options.sureSentenceEndProbability).toBe(0.2);
      const twelve = loadFixture('twelve.wav');
      // "...the opening hours of the museum" heard with a doubted "museum" (posterior 0.05).
      const [likely] = await endsAfterSpeech(vad, twelve, options, { afterProbeMs: 20, cue: 'neutral' }, false, 0.05, 0.2);
      const [unsure] = await endsAfterSpeech(vad, twelve, options, { afterProbeMs: 20, cue: 'neutral' }, false, 0.05, 0.19);
      // "call my sister denied" revised to "... tonight" as the silence grows: a whole sentence.
      const [revisedToEnd] = await endsAfterSpeech(vad, twelve, options, { afterProbeMs: 20, cue: 'neutral' }, true, 0.44, 0.39);
      // "what time does" revised to "what time does the" (0.19: still no likely end), or by a recogniser without a model.
      const [revisedUnsure] = await endsAfterSpeech(vad, twelve, options, { afterProbeMs: 20, cue: 'neutral' }, true, 0.9, 0.19);
      const [revisedUnknown] = await endsAfterSpeech(vad, twelve, options, { afterProbeMs: 20, cue: 'neutral' }, true, 0.9, undefined);
      for (const ended of [likely, revisedToEnd]) {
        expect(ended).toBeGreaterThanOrEqual(options.endSilenceMs);
        expect(ended).toBeLessThan(options.endSilenceMs + 100);
      }
      for (const held of [unsure, revisedUnsure, revisedUnknown]) {
        expect(held).toBeGreaterThanOrEqual(options.incompleteSilenceMs);
        expect(held).toBeLessThanOrEqual(options.incompleteSilenceMs + 100);
      }
    });

    it('a cue still being recognised at the usual end holds the turn at most cueWaitMs more', async () => {
      vad ??= await factories[name]!();
      const options = endpointerOptions();
      const [ended] = await endsAfterSpeech(vad, loadFixture('twelve.wav'), options);
      expect(ended).toBeGreaterThanOrEqual(options.endSilenceMs + options.cueWaitMs);
      expect(ended).toBeLessThanOrEqual(options.endSilenceMs + options.cueWaitMs + 100);
    });
  });

  it('measures a segment: its voiced time and the mean power of its voiced frames (the level gate\'s speech level)', async () => {
    const vad = await createSileroFactory();
    const loud = loadFixture('name.wav');
    const quiet = Int16Array.from(loud, (v) => Math.round(v / 10));
    const measure = async (clip: Int16Array) => {
      const endpointer = new Endpointer(plain());
      let atEnd: { voicedMs: number; levelDb: number } | undefined;
      for (const { frame, speech } of await vadFrames(vad, concat(roomTone(300), clip, roomTone(1000)))) {
        if (endpointer.push(frame, speech, rmsDbfs(frame)).some((e) => e.type === 'turn_end')) atEnd = endpointer.speech;
      }
      return atEnd!;
    };
    const [a, b] = [await measure(loud), await measure(quiet)];
    expect(a.voicedMs).toBeGreaterThan(600);
    expect(a.levelDb).toBeGreaterThan(-22);
    expect(a.levelDb).toBeLessThan(-12);
    // 20 dB quieter, the same voiced frames: 20 dB lower, within a frame or two's difference.
    expect(a.levelDb - b.levelDb).toBeGreaterThan(18);
    expect(a.levelDb - b.levelDb).toBeLessThan(22);
  });
});
