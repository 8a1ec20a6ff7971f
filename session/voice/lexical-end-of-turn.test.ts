import { describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone } from '../../media/testing/audio-stream.ts';
import { clipTranscriber } from '../testing/fake-speech.ts';
import { useFakeClock } from '../testing/test-session.ts';
import { openVoiceSession, speak } from '../testing/voice-rig.ts';

/**
 * The lexical end of turn in a session: a thinking pause after a trailing "and" is held open.
 * The cue is on only with a recogniser that streams partial transcripts (pocketsphinx; the fake
 * one here with `partials`); with final transcripts only, the same pause ends the turn. The cue
 * words: lexical-cue.test.ts. With pocketsphinx and Silero over the socket: e2e/voice-*.test.ts.
 */

useFakeClock();

// pause-and.wav: "i would like to book a table for two and", about 700 ms of silence from
// 2.48 s, then "a window seat please". Cut in the middle of the silence.
const clip = loadFixture('pause-and.wav');
const CUT = 142 * 320;
const BEFORE = 'i would like to book a table for two and';
const AFTER = 'a window seat please';
const transcriber = clipTranscriber({ [BEFORE]: clip.subarray(0, CUT), [AFTER]: clip.subarray(CUT) });
const SURE = 'i would like a table for two';

/**
 * The transcripts of the clip heard as SURE, the pause, AFTER, when the recheck's last-word
 * posterior and sentence-end probability are these (the words stay the same through the pause).
 */
async function transcriptsWith(recheck: { posterior: number; sentenceEnd?: number }): Promise<string[]> {
  const heard = clipTranscriber({ [SURE]: clip.subarray(0, CUT), [AFTER]: clip.subarray(CUT) });
  const sentenceEnd = recheck.sentenceEnd;
  const { client } = openVoiceSession({ transcriber: heard, partials: true, posterior: () => recheck.posterior, ...(sentenceEnd === undefined ? {} : { sentenceEnd: () => sentenceEnd }) });
  await speak(client, concat(roomTone(200), clip, roomTone(1600)));
  const asr = await client.waitFor('asr');
  await client.waitFor('done', (f) => f.turn_id === asr.turn_id);
  if (asr.text === SURE) await client.waitFor('asr', (f) => f.turn_id !== asr.turn_id);
  return client.all('asr').map((f) => f.text);
}

describe('lexical end of turn', () => {
  it('a thinking pause after a trailing "and" is not cut: one turn, one transcript', async () => {
    const { client } = openVoiceSession({ transcriber, partials: true });
    await speak(client, concat(roomTone(200), clip, roomTone(1600)));
    const asr = await client.waitFor('asr');
    expect(asr.text).toBe(`${BEFORE} ${AFTER}`);
    await client.waitFor('done', (f) => f.turn_id === asr.turn_id);
    expect(client.all('asr')).toHaveLength(1);
    client.assertProtocol();
  });

  // Cut by the rule before (0bfa454): a question shortened the wait; a trailing "is" was neutral.
  it.each([
    ['can you remind me', 'to call my sister'],
    ['i think the best option is', 'the second one'],
  ])('a pause after "%s" is not cut: one turn', async (before, after) => {
    const { client } = openVoiceSession({ transcriber: clipTranscriber({ [before]: clip.subarray(0, CUT), [after]: clip.subarray(CUT) }), partials: true });
    await speak(client, concat(roomTone(200), clip, roomTone(1600)));
    const asr = await client.waitFor('asr');
    expect(asr.text).toBe(`${before} ${after}`);
    await client.waitFor('done', (f) => f.turn_id === asr.turn_id);
    expect(client.all('asr')).toHaveLength(1);
  });

  /**
   * The clip heard with its last word before the pause revised once 130 ms of quiet follow it:
   * the probe (at 100 ms) hears "two", the recheck (at 160 ms) "you"; either alone ends the turn
   * as usual. `sentenceEnd`: the language model's answer for the revised words (none: no model).
   */
  async function transcriptsRevised(sentenceEnd?: number): Promise<string[]> {
    const first = 'i would like a table for two';
    const heard = clipTranscriber({ [first]: clip.subarray(0, CUT), [AFTER]: clip.subarray(CUT) });
    const revising = (audio: Int16Array): string => {
      const text = heard(audio);
      let quiet = audio.length;
      while (quiet > 0 && Math.abs(audio[quiet - 1]!) < 200) quiet -= 1;
      return text === first && (audio.length - quiet) / 16 > 130 ? 'i would like a table for you' : text;
    };
    const { client } = openVoiceSession({ transcriber: revising, partials: true, ...(sentenceEnd === undefined ? {} : { sentenceEnd: () => sentenceEnd }) });
    await speak(client, concat(roomTone(200), clip, roomTone(1600)));
    const asr = await client.waitFor('asr');
    await client.waitFor('done', (f) => f.turn_id === asr.turn_id);
    if (asr.text !== `${first} ${AFTER}`) await client.waitFor('asr', (f) => f.turn_id !== asr.turn_id);
    return client.all('asr').map((f) => f.text);
  }

  it('words the recogniser revises a moment into the pause (the recheck) hold it: one turn', async () => {
    expect(await transcriptsRevised()).toEqual([`i would like a table for two ${AFTER}`]);
    expect(await transcriptsRevised(0.19)).toEqual([`i would like a table for two ${AFTER}`]);
  });

  it('revised words that make a likely sentence end (language model 0.2 or more) do not hold it: the turn ends', async () => {
    expect(await transcriptsRevised(0.39)).toEqual(['i would like a table for you', AFTER]);
  });

  it('a last word the recogniser doubts at the recheck (posterior under 0.2) holds the pause: one turn; a sure one does not', async () => {
    expect(await transcriptsWith({ posterior: 0.05 })).toEqual([`${SURE} ${AFTER}`]);
    expect(await transcriptsWith({ posterior: 0.9 })).toEqual([SURE, AFTER]);
  });

  it('words a sentence rarely ends on at the recheck (language model under 0.12) hold the pause though the recogniser is sure of them: one turn; likely ends do not', async () => {
    // A sure last word through the pause; only the language model's answer differs.
    expect(await transcriptsWith({ posterior: 0.9, sentenceEnd: 0.05 })).toEqual([`${SURE} ${AFTER}`]);
    expect(await transcriptsWith({ posterior: 0.9, sentenceEnd: 0.3 })).toEqual([SURE, AFTER]);
  });

  it('without partial transcripts the cue is off: the same pause ends the turn', async () => {
    const { client } = openVoiceSession({ transcriber, partials: false });
    await speak(client, concat(roomTone(200), clip, roomTone(1600)));
    const first = await client.waitFor('asr');
    expect(first.text).toBe(BEFORE);
    expect((await client.waitFor('asr', (f) => f.turn_id !== first.turn_id)).text).toBe(AFTER);
  });
});
