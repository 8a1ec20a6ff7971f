import { describe, expect, it } from 'vitest';
import { rmsDbfs } from '../../media/pcm.ts';
import { concat, hiss, loadFixture, roomTone } from '../../media/testing/audio-stream.ts';
import type { VadFactory } from '../../media/vad.ts';
import { FakeLanguageModel } from '../testing/fake-llm.ts';
import { FakeTextToSpeech } from '../testing/fake-speech.ts';
import { passTime, useFakeClock } from '../testing/test-session.ts';
import { fixtureTranscriber, openVoiceSession, speak } from '../testing/voice-rig.ts';
import { DEFAULT_BARGE_IN } from './barge-in.ts';
import { SentenceSplitter } from './sentences.ts';
import { SpokenTimeline } from './spoken-text.ts';

/**
 * False-interruption recovery in a session (the real fvad VAD and endpointer, fake recognition
 * and synthesis, simulated time): sounds are played 1.2 s into a reply of about 6 s. The policy
 * alone: barge-in.test.ts. Silero, which neither pauses for a cough nor for a steady tone (fvad
 * calls both speech), with pocketsphinx over the socket: e2e/voice-barge-in.test.ts.
 */

useFakeClock();

const REPLY = 'One two three four five six seven eight nine ten. Eleven twelve thirteen fourteen fifteen sixteen seventeen.';
/** BARGE_IN_MAX_PAUSE_MS's default: a pause no confirmation ends is over by then. */
const MAX_PAUSE_MS = DEFAULT_BARGE_IN.maxPauseMs;
/** A downlink silence this long is a pause; the pacer's frames are 20 ms apart. */
const PAUSE_GAP_MS = 300;

/** A detector that voices every frame louder than `dbfs` and decides each frame as it is pushed (the clock stays exact). */
function voicedOver(dbfs: number): VadFactory {
  return { provider: 'silero', create: (onDecision) => ({ pending: 0, free: () => undefined, push: (frame) => onDecision(frame, rmsDbfs(frame) > dbfs) }) };
}

/** Starts the reply, plays `sound` into it after 1.2 s of its audio, waits for the reply to end. */
async function replyWith(sound: Int16Array | undefined, session: Omit<Parameters<typeof openVoiceSession>[0] & object, 'llm'> = {}) {
  const llm = new FakeLanguageModel();
  llm.delayMs = 10;
  llm.enqueue({ text: REPLY });
  const { client, stt } = openVoiceSession({ ...session, llm });
  client.send({ type: 'inject_context', message_id: 'm1', role: 'user', text: 'count, please' });
  const turnId = (await client.waitFor('inject_context_ack')).turn_id!;
  await client.waitFor('text_delta', (f) => f.turn_id === turnId);
  await client.waitAudio();
  await passTime(1200 - (performance.now() - client.audioArrivals[0]!));
  // The first frame sent holds the 20 ms before it: that is when the sound began.
  const soundAt = performance.now() - 20;
  if (sound) void speak(client, concat(sound, roomTone(2500)));
  const done = await client.waitFor('done', (f) => f.turn_id === turnId, 20_000);
  return { client, stt, turnId, done, soundAt, audio: Buffer.concat(client.audio), gaps: client.audioGaps(PAUSE_GAP_MS, soundAt) };
}

let reference: Buffer | undefined;
/** The same reply with nothing played into it. */
async function referenceAudio(): Promise<Buffer> {
  if (!reference) {
    const { client, done, audio, gaps } = await replyWith(undefined);
    expect(done.status).toBe('completed');
    expect(gaps).toHaveLength(0);
    reference = audio;
    client.close();
  }
  return reference;
}

describe('false-interruption recovery', () => {
  it('a backchannel pauses the reply, which resumes from the paused point: no interrupted, no lost or repeated audio', async () => {
    const { client, stt, done, audio, gaps } = await replyWith(loadFixture('okay.wav'));
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    // It did pause: one gap in the downlink after the sound, over by the longest pause.
    expect(gaps).toHaveLength(1);
    expect(gaps[0]).toBeLessThanOrEqual(MAX_PAUSE_MS + 40);
    // Every byte of the reply arrived exactly once, in order.
    expect(audio.equals(await referenceAudio())).toBe(true);
    // The recogniser heard it, and the backchannel did not become a turn.
    expect(stt.heard.length).toBeGreaterThan(0);
    expect(client.all('asr')).toHaveLength(1);
    client.assertProtocol();
  });

  it('with a streaming recogniser, a backchannel resumes at its first pause, though end of turn would hold it; in flow mode it starts no reply', async () => {
    const okay = loadFixture('okay.wav');
    const okayMs = okay.length / 16;
    for (const flow of [false, true]) {
      // The recogniser doubts a lone word ends a sentence: end of turn would wait its long hold.
      const { client, done, audio, gaps } = await replyWith(okay, { partials: true, sentenceEnd: () => 0.01, mode: { flow } });
      expect(done.status).toBe('completed');
      expect(client.all('interrupted')).toHaveLength(0);
      // Paused from the onset until 100 ms of silence and the partial's words: well before the turn would end.
      expect(gaps).toHaveLength(1);
      expect(gaps[0]).toBeLessThan(okayMs + 250);
      expect(audio.equals(await referenceAudio())).toBe(true);
      expect(client.all('asr')).toHaveLength(1);
      expect(client.all('canceled')).toHaveLength(0);
      client.assertProtocol();
    }
  });

  it('a probe that fails settles nothing: the pause waits for the final transcript', async () => {
    const okay = loadFixture('okay.wav');
    let calls = 0;
    const transcriber = (audio: Int16Array): string => {
      calls += 1;
      if (calls === 1) throw new Error('the recogniser stopped');
      return fixtureTranscriber(audio);
    };
    const answered = await replyWith(okay, { partials: true });
    const { client, done, audio, gaps } = await replyWith(okay, { partials: true, transcriber });
    expect(done.status).toBe('completed');
    expect(gaps).toHaveLength(1);
    // Not at the pause (100 ms of silence, as when the partial answers) but at the turn's end (260 ms).
    expect(gaps[0]! - answered.gaps[0]!).toBeGreaterThan(100);
    expect(audio.equals(await referenceAudio())).toBe(true);
    expect(client.all('asr')).toHaveLength(1);
  });

  it('a cough pauses the reply (fvad calls it speech), then it resumes from the paused point', async () => {
    const { client, done, audio, gaps } = await replyWith(loadFixture('cough.wav'));
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    expect(gaps).toHaveLength(1);
    expect(audio.equals(await referenceAudio())).toBe(true);
  });

  it('a sound voiced for two frames pauses the reply at its first, and the reply goes on within the listener\'s buffer: no turn, no lost or repeated audio', async () => {
    // Two frames as Silero voices a 20 ms slice of a vowel (media/speech-onset.test.ts); this
    // detector decides each frame as it is pushed, so the clock stays exact.
    const vad: VadFactory = {
      provider: 'silero',
      create: (onDecision) => ({ pending: 0, free: () => undefined, push: (frame) => onDecision(frame, rmsDbfs(frame) > -30) }),
    };
    const blip = Int16Array.from({ length: 640 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 16000)));
    const { client, done, audio, gaps } = await replyWith(blip, { vad });
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    expect(client.all('asr').filter((f) => f.input_source === 'voice')).toHaveLength(0);
    // Paused from the first voiced frame until no segment could start (three frames on): a gap
    // the pacer's 60 ms lead refills at once.
    const brief = client.audioGaps(40, performance.now() - 10_000).filter((ms) => ms < PAUSE_GAP_MS);
    expect(brief).toHaveLength(1);
    expect(brief[0]).toBeLessThanOrEqual(100);
    expect(gaps).toHaveLength(0);
    expect(audio.equals(await referenceAudio())).toBe(true);
  });

  it('hiss with no voice after it (a fricative alone, a burst of noise) pauses the reply once, for at most 220 ms: no turn, no lost or repeated audio', async () => {
    const { client, done, audio, gaps } = await replyWith(hiss(400), { vad: voicedOver(-20) });
    expect(done.status).toBe('completed');
    expect(client.all('interrupted')).toHaveLength(0);
    expect(client.all('asr').filter((f) => f.input_source === 'voice')).toHaveLength(0);
    const brief = client.audioGaps(40, performance.now() - 10_000).filter((ms) => ms < PAUSE_GAP_MS);
    expect(brief).toHaveLength(1);
    expect(brief[0]).toBeLessThanOrEqual(220 + 20);
    expect(gaps).toHaveLength(0);
    expect(audio.equals(await referenceAudio())).toBe(true);
  });

  it('a fricative start pauses the reply at its second frame of hiss, before the detector voices anything', async () => {
    const vowel = Int16Array.from({ length: 16 * 400 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 16000)));
    const stopAfter = async (sound: Int16Array) => {
      const { client, soundAt } = await replyWith(sound, { vad: voicedOver(-20) });
      const at = client.audioArrivals;
      const stop = at.findIndex((t, i) => t >= soundAt && i + 1 < at.length && at[i + 1]! - t > 40);
      return at[stop]! - soundAt;
    };
    const voiced = await stopAfter(vowel);
    const fricative = await stopAfter(concat(hiss(120), vowel));
    // The downlink's last frame before the pause: with the vowel alone at its first voiced frame,
    // after hiss at the hiss's second frame (it then holds until the vowel starts the segment).
    expect(voiced).toBeLessThanOrEqual(2 * 20);
    expect(fricative).toBeLessThanOrEqual(Math.max(voiced, 20) + 20);
  });

  it('a real interruption truncates the reply to exactly the audio that was sent', async () => {
    const { client, turnId, done, audio } = await replyWith(loadFixture('name.wav'));
    expect(done.status).toBe('interrupted');
    expect(await client.waitFor('interrupted', (f) => f.turn_id === turnId)).toMatchObject({ clear: true, barge_seq: 1 });
    // The client played all it got: the heard text is the text of exactly that much audio.
    client.send({ type: 'client_event', event: 'playback_stopped', remaining_ms: 0, barge_seq: 1 });
    const corrected = await client.waitFor('utterance', (u) => u.turn_id === turnId && u.corrected);
    const receivedMs = audio.length / 2 / 16;
    expect(corrected.text).toBe(await heardText(receivedMs));
    expect(corrected.text.length).toBeGreaterThan(0);
    expect(REPLY.length).toBeGreaterThan(corrected.text.length);
    // Nothing was sent after the pause: the reference reply is longer and starts the same.
    const whole = await referenceAudio();
    expect(whole.length).toBeGreaterThan(audio.length);
    expect(whole.subarray(0, audio.length).equals(audio)).toBe(true);
    expect((await client.waitFor('asr', (f) => f.input_source === 'voice' && f.turn_id !== turnId)).text).toBe('my name is robert');
    client.assertProtocol();
  });
});

/** What the session's timeline says was heard after `ms` of this reply's audio (the fake synthesiser). */
async function heardText(ms: number): Promise<string> {
  const tts = new FakeTextToSpeech();
  const timeline = new SpokenTimeline();
  const splitter = new SentenceSplitter();
  for (const sentence of [...splitter.push(REPLY), ...splitter.flush()]) {
    for await (const chunk of tts.synthesize(sentence, 'slt', new AbortController().signal)) timeline.add(sentence, (chunk.samples.length * 1000) / chunk.sampleRate);
  }
  return timeline.textAt(ms);
}
