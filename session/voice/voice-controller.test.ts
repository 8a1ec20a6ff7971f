import { describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone, silence } from '../../media/testing/audio-stream.ts';
import { FakeLanguageModel } from '../testing/fake-llm.ts';
import { useFakeClock } from '../testing/test-session.ts';
import { passTime } from '../testing/tool-kit.ts';
import { openVoiceSession, speak } from '../testing/voice-rig.ts';

/**
 * Voice turn-taking on the real VAD and endpointer, in simulated time: pauses inside a sentence,
 * noise, barge-in with the playback report, and flow mode's eager replies. What the recogniser
 * hears is checked through its transcript (the fake recogniser names the fixture clips it finds).
 * Over the socket with real recognition: session/e2e/voice-*.test.ts.
 */

useFakeClock();

describe('voice turn-taking', () => {
  it('keeps a 220 ms pause inside a sentence in one turn', async () => {
    const { client, stt } = openVoiceSession();
    await speak(client, concat(roomTone(200), loadFixture('order-pause.wav'), roomTone(1000)));
    const asr = await client.waitFor('asr');
    expect(asr.text).toBe('i would like to order a large pizza with mushrooms');
    await client.waitFor('done', (f) => f.turn_id === asr.turn_id);
    expect(client.all('asr')).toHaveLength(1);
    expect(stt.heard).toHaveLength(1);
    client.assertProtocol();
  });

  it('ignores a noise burst and a click: no turn, no transcript', async () => {
    const { client } = openVoiceSession();
    await speak(client, concat(roomTone(200), loadFixture('noise.wav'), roomTone(400), loadFixture('click.wav'), roomTone(800)));
    await passTime(800);
    expect(client.all('asr')).toHaveLength(0);
    expect(client.all('turn')).toHaveLength(0);
  });

  it('barge-in stops the reply, then playback_stopped truncates it to what was heard', async () => {
    const llm = new FakeLanguageModel();
    llm.delayMs = 10;
    const { client } = openVoiceSession({ llm });
    llm.enqueue({ text: 'one two three four five six seven eight nine ten. '.repeat(4).trim() });
    client.send({ type: 'inject_context', message_id: 'm1', role: 'user', text: 'count to ten, four times' });
    const ack = await client.waitFor('inject_context_ack');
    const turnId = ack.turn_id!;
    await client.waitAudio();
    await passTime(1500);
    const before = client.audio.length;
    void speak(client, concat(loadFixture('name.wav'), roomTone(900)));
    const interrupted = await client.waitFor('interrupted', (f) => f.turn_id === turnId);
    expect(interrupted).toMatchObject({ clear: true, barge_seq: 1 });
    const done = await client.waitFor('done', (f) => f.turn_id === turnId);
    expect(done.status).toBe('interrupted');
    const audioAtInterrupt = client.audio.length;
    await passTime(200);
    // The downlink stopped at once: at the speech's first voiced frame (fvad voices name.wav's
    // first), not two frames later where its segment starts; nothing after interrupted.
    expect(before).toBeGreaterThan(0);
    expect(audioAtInterrupt - before).toBeLessThanOrEqual(1);
    expect(client.audio.length - audioAtInterrupt).toBeLessThanOrEqual(1);
    const first = client.all('utterance').find((u) => u.turn_id === turnId && !u.corrected)!;
    client.send({ type: 'client_event', event: 'playback_stopped', remaining_ms: 1000, barge_seq: 1 });
    const corrected = await client.waitFor('utterance', (u) => u.turn_id === turnId && u.corrected);
    expect(corrected.barge_seq).toBe(1);
    expect(corrected.text.length).toBeLessThan(first.text.length);
    expect(first.text.startsWith(corrected.text)).toBe(true);
    // The user's barge-in turn is answered next.
    const asr = await client.waitFor('asr', (f) => f.input_source === 'voice');
    expect(asr.text).toBe('my name is robert');
    client.assertProtocol();
  });
});

describe('eager replies (mode.flow)', () => {
  it('starts a reply during a long pause and retracts it with canceled when the user goes on', async () => {
    // Threshold 0.05: the turn ends after 740 ms of silence; the eager reply may start at 370 ms.
    // Its answer takes about 2 s to speak, so it is still in flight when the user goes on.
    // A statement first: a complete question would shorten the wait (lexical cue) below 700 ms.
    const llm = new FakeLanguageModel();
    llm.script(() => ({ text: 'Twelve times seven is eighty-four.' }));
    const { client } = openVoiceSession({ llm, mode: { flow: true, turn_end_threshold: 0.05 } });
    await speak(client, concat(roomTone(200), loadFixture('name.wav'), roomTone(700), loadFixture('twelve.wav'), roomTone(1500)));
    const canceled = await client.waitFor('canceled');
    const eagerAsr = client.all('asr').find((a) => a.turn_id === canceled.turn_id)!;
    expect(eagerAsr.text).toBe('my name is robert');
    expect((await client.waitFor('done', (d) => d.turn_id === canceled.turn_id)).status).toBe('canceled');
    // The whole utterance is transcribed again and answered once.
    const final = await client.waitFor('asr', (a) => a.turn_id !== canceled.turn_id);
    expect(final.text).toBe('my name is robert what is twelve times seven');
    await client.waitFor('done', (d) => d.turn_id === final.turn_id);
    expect(client.all('asr')).toHaveLength(2);
    client.assertProtocol();
  });

  it('commits the eager reply when the user stays silent: one answer, no canceled', async () => {
    const { client } = openVoiceSession({ mode: { flow: true } });
    await speak(client, concat(roomTone(200), loadFixture('twelve.wav'), roomTone(1200)));
    const asr = await client.waitFor('asr');
    await client.waitFor('done', (d) => d.turn_id === asr.turn_id);
    expect(client.all('canceled')).toHaveLength(0);
    expect(client.all('asr')).toHaveLength(1);
  });
});

describe('microphone warnings', () => {
  it('warns about a digitally silent microphone without ending the session', async () => {
    const { client } = openVoiceSession();
    await speak(client, silence(3300));
    const warning = await client.waitFor('silent_mic');
    expect(warning).toMatchObject({ reason: 'digital_silence', peak: 0 });
    expect(warning.duration_ms).toBeGreaterThanOrEqual(3000);
    // Still alive: a spoken turn works afterwards.
    await speak(client, concat(loadFixture('twelve.wav'), roomTone(900)));
    expect((await client.waitFor('asr')).text).toBe('what is twelve times seven');
    client.assertProtocol();
  });

  it('warns near_silent for a live but useless microphone', async () => {
    const { client } = openVoiceSession();
    await speak(client, loadFixture('near-silent.wav'));
    const warning = await client.waitFor('silent_mic');
    expect(warning.reason).toBe('near_silent');
    expect(warning.duration_ms).toBeGreaterThanOrEqual(5000);
    expect(warning.peak).toBeGreaterThan(0);
    expect(warning.peak).toBeLessThanOrEqual(64);
  });
});
