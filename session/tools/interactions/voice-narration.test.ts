import { describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone } from '../../../media/testing/audio-stream.ts';
import type { FakeReply } from '../../testing/fake-llm.ts';
import { book, isNarration, narration, narrationTurn, statesOf, TEST_TIMING } from '../../testing/interaction-kit.ts';
import { useFakeClock, type TestSession } from '../../testing/test-session.ts';
import { passTime, requests, useRigs, type Rig } from '../../testing/tool-kit.ts';
import { openVoiceSession, speak } from '../../testing/voice-rig.ts';

/**
 * The barge rows of SPEC "Interaction narration states", in voice, where "heard" means audio of
 * the narration was sent: a barge before anything was heard supersedes the narration; a barge
 * after part of it was heard leaves it started (voiced), so the user's turn is constrained to
 * interaction_transition. Real VAD and endpointer, fake recognition and synthesis, simulated time.
 */

const start = useRigs();
useFakeClock();

/** A voice session with a deferred `book` job (call id `call_v`); the narration answers with `narrationReply`. */
async function voiceWithJob(narrationReply: FakeReply): Promise<{ rig: Rig; client: TestSession; callId: string }> {
  const rig = await start();
  rig.fake.script((body) => (isNarration(body) ? narrationReply : { text: 'ok' }));
  const callId = 'call_v';
  const { client } = openVoiceSession({ llm: rig.fake, mode: { tools: [book] }, tools: { interactions: TEST_TIMING } });
  rig.fake.enqueue({ toolCalls: [{ id: callId, name: 'book', args: {} }] });
  client.send({ type: 'inject_context', message_id: 'm-1', role: 'user', text: 'book a table', reply: true });
  const ack = await client.waitFor('inject_context_ack');
  await client.waitFor('tool_call', (f) => f.id === callId);
  client.send({ type: 'tool_deferred', id: callId, handle: `h-${callId}` });
  await client.waitFor('done', (f) => f.turn_id === ack.turn_id);
  return { rig, client, callId };
}

function lastUserRound(rig: Rig) {
  return requests(rig).filter((b) => !isNarration(b)).at(-1)!;
}

describe('barge-in and interaction narration (voice)', () => {
  it('started → superseded: a barge before anything of the narration was heard (no audio sent)', async () => {
    const { rig, client, callId } = await voiceWithJob({ hang: true });
    client.send({ type: 'tool_partial_result', id: callId, content: {}, interaction: { id: 'v-ask-1', prompt: 'Garden or window?', options: ['garden', 'window'] } });
    const started = await narration(client, 'started', 'v-ask-1');
    const turnId = await narrationTurn(client, started);
    const audioBefore = client.audio.length;
    void speak(client, concat(roomTone(200), loadFixture('name.wav'), roomTone(1200)));
    await narration(client, 'superseded', 'v-ask-1');
    const interrupted = await client.waitFor('done', (f) => f.turn_id === turnId);
    expect(interrupted.status).toBe('interrupted');
    expect(client.audio.length).toBe(audioBefore);
    const asr = await client.waitFor('asr', (f) => f.input_source === 'voice');
    await client.waitFor('done', (f) => f.turn_id === asr.turn_id);
    // Not voiced: the user's turn is not constrained.
    expect(lastUserRound(rig).toolChoice).toBe('auto');
    expect(statesOf(client, 'v-ask-1')).toEqual(['started', 'superseded']);
    client.assertProtocol();
  });

  it('queued → superseded: a barge while the ask waits behind a reply being spoken', async () => {
    const { rig, client, callId } = await voiceWithJob({ text: 'ok' });
    rig.fake.enqueue({ text: 'Here is a long answer about tables and gardens and windows, spoken slowly so that there is time to interrupt it. It goes on for a while longer.' });
    client.send({ type: 'inject_context', message_id: 'm-long', role: 'user', text: 'tell me about the tables', reply: true });
    const ack = await client.waitFor('inject_context_ack', (f) => f.message_id === 'm-long');
    await client.waitAudio(client.audio.length);
    client.send({ type: 'tool_partial_result', id: callId, content: {}, interaction: { id: 'v-ask-q', prompt: 'Garden or window?', options: ['garden', 'window'] } });
    await narration(client, 'queued', 'v-ask-q');
    void speak(client, concat(loadFixture('name.wav'), roomTone(1200)));
    const superseded = await narration(client, 'superseded', 'v-ask-q');
    const interrupted = await client.waitFor('interrupted', (f) => f.turn_id === ack.turn_id);
    // Superseded at the barge, before the interrupted reply's transcript turn.
    expect(client.frames.indexOf(superseded)).toBeLessThan(client.frames.indexOf(interrupted));
    const asr = await client.waitFor('asr', (f) => f.input_source === 'voice');
    await client.waitFor('done', (f) => f.turn_id === asr.turn_id);
    expect(statesOf(client, 'v-ask-q')).toEqual(['queued', 'superseded']);
    client.assertProtocol();
  });

  it('a barge after part of the narration was heard leaves it started; the user turn opens with interaction_transition', async () => {
    const { rig, client, callId } = await voiceWithJob({
      text: 'Would you like the small table by the window, or the large table out in the garden where it is quieter? Please tell me which one you prefer.',
    });
    client.send({ type: 'tool_partial_result', id: callId, content: {}, interaction: { id: 'v-ask-2', prompt: 'Garden or window?', options: ['garden', 'window'] } });
    const started = await narration(client, 'started', 'v-ask-2');
    const turnId = await narrationTurn(client, started);
    await client.waitAudio(client.audio.length);
    await passTime(1200);
    void speak(client, concat(loadFixture('name.wav'), roomTone(1200)));
    const done = await client.waitFor('done', (f) => f.turn_id === turnId);
    expect(done.status).toBe('interrupted');
    const asr = await client.waitFor('asr', (f) => f.input_source === 'voice');
    await client.waitFor('done', (f) => f.turn_id === asr.turn_id);
    expect(statesOf(client, 'v-ask-2')).toEqual(['started']);
    expect(lastUserRound(rig).toolChoice).toEqual({ tool: 'interaction_transition' });
    client.assertProtocol();
  });
});
