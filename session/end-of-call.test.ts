import { describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone } from '../media/testing/audio-stream.ts';
import { LocalLanguageModel } from './providers/local-llm.ts';
import { useFakeClock } from './testing/test-session.ts';
import { openVoiceSession, speak } from './testing/voice-rig.ts';
import { ask, done, finish, lookup, nextTurn, open, pos, request, requests, passTime, toolCallFrame, toolNames, toolResult, useRigs, utteranceOf, WAIT_MS } from './testing/tool-kit.ts';

/**
 * The two clean endings (SPEC "Assistant end of session"): the managed end_call tool (farewell
 * only, session_end_requested, close after a grace period unless the user speaks) and the
 * client's wrap_up (finish the reply, sign off, close 1000 "idle").
 */

const start = useRigs();
useFakeClock();

describe('end_call', () => {
  it('farewell is the whole utterance, then session_end_requested, then close 1000 after the grace', async () => {
    const rig = await start({ endCallGraceMs: 300 });
    rig.fake.enqueue({ text: 'Sure thing. ', toolCalls: [{ id: 'call_end', name: 'end_call', args: { farewell: 'Bye now' } }] });
    const client = await open(rig, { end_call: true, tools: [lookup] });
    const { turnId } = await ask(client, "that's all, thanks");
    const end = await done(client, turnId);
    expect(end.status).toBe('completed');
    expect(utteranceOf(client, turnId)).toBe('Bye now');
    expect(client.all('utterance').filter((u) => u.turn_id === turnId)).toHaveLength(1);
    const requested = await client.waitFor('session_end_requested', () => true, WAIT_MS);
    expect(requested).toEqual({ type: 'session_end_requested', farewell: 'Bye now' });
    expect(pos(client, end)).toBeLessThan(pos(client, requested));
    const closed = await client.waitClose(WAIT_MS);
    expect(closed.code).toBe(1000);
    // end_call was offered, and it is run by the server: never sent to the client.
    expect(toolNames(request(rig, 0))).toContain('end_call');
    expect(client.all('tool_call')).toEqual([]);
    expect(requests(rig)).toHaveLength(1);
    finish(client, rig);
  });

  it('a user input_text during the grace cancels the close', async () => {
    const rig = await start({ endCallGraceMs: 1000 });
    rig.fake.enqueue({ toolCalls: [{ id: 'call_end', name: 'end_call', args: { farewell: 'Goodbye!' } }] }, { text: 'Of course, go on.' });
    const client = await open(rig, { end_call: true });
    const first = await ask(client, 'bye');
    await done(client, first.turnId);
    await client.waitFor('session_end_requested', () => true, WAIT_MS);
    const second = await ask(client, 'wait, one more thing');
    await done(client, second.turnId);
    expect(utteranceOf(client, second.turnId)).toBe('Of course, go on.');
    await passTime(2500);
    expect(client.closed).toBeUndefined();
    const third = await ask(client, 'still there?');
    expect((await done(client, third.turnId)).status).toBe('completed');
    finish(client, rig);
  });

  it('not offered when mode.end_call is false; a call to it anyway does not end the session', async () => {
    const rig = await start({ endCallGraceMs: 200 });
    rig.fake.enqueue({ toolCalls: [{ id: 'call_end', name: 'end_call', args: { farewell: 'Bye' } }] }, { text: 'I cannot hang up.' });
    const client = await open(rig, { tools: [lookup] });
    const { turnId } = await ask(client, 'hang up');
    await done(client, turnId);
    expect(toolNames(request(rig, 0))).not.toContain('end_call');
    await passTime(800);
    expect(client.all('session_end_requested')).toEqual([]);
    expect(client.closed).toBeUndefined();
    expect(toolResult(request(rig, 1), 'call_end')?.outcome).toBe('failed');
    expect(utteranceOf(client, turnId)).toBe('I cannot hang up.');
    finish(client, rig);
  });

  it("with mode.end_call off, a client tool named end_call is the client's: tool_call, no session end", async () => {
    const rig = await start({ endCallGraceMs: 200 });
    rig.fake.enqueue({ toolCalls: [{ id: 'call_hang', name: 'end_call', args: { line: 2 } }] }, { text: 'Line 2 is closed.' });
    const client = await open(rig, { tools: [{ name: 'end_call', description: 'close a phone line' }] });
    const { turnId } = await ask(client, 'close line 2');
    const call = await toolCallFrame(client, 'call_hang');
    expect(call).toEqual({ type: 'tool_call', id: 'call_hang', name: 'end_call', args: { line: 2 } });
    client.send({ type: 'tool_result', id: 'call_hang', content: 'closed', outcome: 'succeeded', verified: true });
    await done(client, turnId);
    expect(utteranceOf(client, turnId)).toBe('Line 2 is closed.');
    await passTime(600);
    expect(client.all('session_end_requested')).toEqual([]);
    expect(client.closed).toBeUndefined();
    finish(client, rig);
  });

  it('a missing farewell argument still ends with a spoken goodbye', async () => {
    const rig = await start({ endCallGraceMs: 200 });
    rig.fake.enqueue({ toolCalls: [{ id: 'call_end', name: 'end_call', args: {} }] });
    const client = await open(rig, { end_call: true });
    const { turnId } = await ask(client, 'bye');
    await done(client, turnId);
    const farewell = utteranceOf(client, turnId);
    expect(farewell?.length).toBeGreaterThan(0);
    const requested = await client.waitFor('session_end_requested', () => true, WAIT_MS);
    expect(requested.farewell).toBe(farewell);
    expect((await client.waitClose(WAIT_MS)).code).toBe(1000);
    finish(client, rig);
  });
});

describe('wrap_up', () => {
  it('a wrap_up while a reply streams lets it finish, then the sign-off, then close 1000 idle', async () => {
    const rig = await start({ signOff: 'Signing off now, goodbye.' });
    const story = Array.from({ length: 15 }, (_, i) => `part${i}`).join(' ');
    rig.fake.enqueue({ text: story });
    rig.fake.delayMs = 40;
    const client = await open(rig);
    const { turnId } = await ask(client, 'tell me a story');
    await client.waitFor('text_delta', (f) => f.turn_id === turnId, WAIT_MS);
    const sentAt = client.frames.length;
    client.send({ type: 'wrap_up', reason: 'user left' });

    const end = await done(client, turnId);
    expect(pos(client, end)).toBeGreaterThan(sentAt);
    expect(end.status).toBe('completed');
    expect(utteranceOf(client, turnId)).toBe(story);
    const signOff = await nextTurn(client, pos(client, end) + 1);
    expect((await done(client, signOff)).status).toBe('completed');
    expect(utteranceOf(client, signOff)).toBe('Signing off now, goodbye.');
    const closed = await client.waitClose(WAIT_MS);
    expect(closed).toEqual({ code: 1000, reason: 'idle' });
    // The sign-off is fixed text: the model was asked only for the story.
    expect(requests(rig)).toHaveLength(1);
    expect(client.all('interrupted')).toEqual([]);
    finish(client, rig);
  });

  it('a wrap_up with no reply in flight signs off at once and closes 1000 idle', async () => {
    const rig = await start({ signOff: 'Bye for now.' });
    const client = await open(rig);
    client.send({ type: 'wrap_up' });
    const signOff = await nextTurn(client, 0);
    await done(client, signOff);
    expect(utteranceOf(client, signOff)).toBe('Bye for now.');
    expect(await client.waitClose(WAIT_MS)).toEqual({ code: 1000, reason: 'idle' });
    expect(requests(rig)).toHaveLength(0);
    finish(client, rig);
  });

  it('a wrap_up while a tool call is open lets the turn finish with the result first', async () => {
    const rig = await start({ signOff: 'Goodbye.' });
    rig.fake.enqueue({ toolCalls: [{ id: 'call_w', name: 'lookup', args: { order: 'W' } }] }, { text: 'W is on its way.' });
    const client = await open(rig, { tools: [lookup] });
    const { turnId } = await ask(client, 'where is W');
    await toolCallFrame(client, 'call_w');
    client.send({ type: 'wrap_up' });
    await passTime(100);
    expect(client.closed).toBeUndefined();
    client.send({ type: 'tool_result', id: 'call_w', content: 'shipped', outcome: 'succeeded', verified: true });
    expect((await done(client, turnId)).status).toBe('completed');
    expect(utteranceOf(client, turnId)).toBe('W is on its way.');
    expect(await client.waitClose(WAIT_MS)).toEqual({ code: 1000, reason: 'idle' });
    expect(client.all('utterance').at(-1)?.text).toBe('Goodbye.');
    finish(client, rig);
  });
});

describe('end_call in a voice session', () => {
  it('speaks only the farewell, then session_end_requested, then closes 1000 after the grace', async () => {
    const { client, tts } = openVoiceSession({ llm: new LocalLanguageModel(), mode: { end_call: true }, endCallGraceMs: 1500 });
    await speak(client, concat(roomTone(200), loadFixture('name.wav'), roomTone(900)));
    await client.waitFor('done');
    client.send({ type: 'inject_context', message_id: 'bye-1', role: 'user', text: 'goodbye' });
    const end = await client.waitFor('session_end_requested');
    expect(end.farewell).toBe('Goodbye! Talk to you soon.');
    const ack = client.all('inject_context_ack').find((a) => a.message_id === 'bye-1')!;
    expect(client.all('utterance').find((u) => u.turn_id === ack.turn_id)?.text).toBe('Goodbye! Talk to you soon.');
    // The farewell was spoken, and nothing after it.
    expect(tts.spoken.slice(-2)).toEqual(['Goodbye!', 'Talk to you soon.']);
    expect(await client.waitClose()).toEqual({ code: 1000, reason: 'end_call' });
  });
});
