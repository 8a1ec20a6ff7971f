import { beforeEach, describe, expect, it } from 'vitest';
import { LocalLanguageModel } from './providers/local-llm.ts';
import type { LanguageModel } from './providers/llm.ts';
import { expectAlive, longSay, say, WAIT_MS, waitError, waitTurn } from './testing/conversation.ts';
import { FakeLanguageModel } from './testing/fake-llm.ts';
import { openTestSession, useFakeClock, type TestSession } from './testing/test-session.ts';

/**
 * A text conversation, frame by frame (SPEC "Text turns", inject_context, trigger_reply,
 * set_voice, reset, interrupt): the session on a recording transport, the offline local model
 * (or a scripted one where the model request itself is under test), simulated time. Over the
 * real socket: session/e2e/text-conversation.test.ts.
 */

useFakeClock();

const DEFAULT_GREETING = 'Hello! How can I help you today?';

/** The offline model, at once or at 50 ms per word (a 60-word reply streams for three seconds, long enough to cut in on). */
const fast = (): LanguageModel => new LocalLanguageModel();
const slow = (): LanguageModel => new LocalLanguageModel(50);

function openText(llm: () => LanguageModel, mode: Record<string, unknown> = {}): { client: TestSession } {
  return { client: openTestSession({ llm: llm(), mode }) };
}

/** Starts a long reply on the slow server and waits until it is streaming. */
async function startLongReply(client: TestSession, words = 60): Promise<string> {
  const after = client.frames.length;
  const text = longSay(words);
  client.send({ type: 'input_text', text });
  const asr = await client.waitFor('asr', (f) => f.text === text, WAIT_MS, after);
  const turnId = asr.turn_id as string;
  await client.waitFor('text_delta', (f) => f.turn_id === turnId, WAIT_MS, after);
  return turnId;
}

function indexOf(client: TestSession, predicate: (f: (typeof client.frames)[number]) => boolean): number {
  return client.frames.findIndex(predicate);
}

describe('input_text round trip', () => {
  it('asr → turn → text_delta+ → utterance → done, all one turn_id, in that order', async () => {
    const { client } = openText(fast, { greeting: false });
    const reply = await say(client, 'say the quick brown fox jumps');
    expect(reply.asr).toEqual({ type: 'asr', text: 'say the quick brown fox jumps', turn_id: reply.turnId, input_source: 'text' });

    const types = reply.types;
    expect(types[0]).toBe('asr');
    expect(types[1]).toBe('turn');
    expect(types.slice(2, -2).length).toBeGreaterThan(1);
    expect(types.slice(2, -2).every((type) => type === 'text_delta')).toBe(true);
    expect(types.slice(-2)).toEqual(['utterance', 'done']);

    expect(reply.deltas).toBe('the quick brown fox jumps');
    expect(reply.utterance).toEqual({ type: 'utterance', text: reply.deltas, turn_id: reply.turnId, barge_seq: 0, corrected: false });
    // done carries the turn's waterfall (a typed turn has the model's first token and the first delta) and its usage.
    expect(reply.done).toEqual({
      type: 'done', turn_id: reply.turnId, status: 'completed',
      metrics: { llm_first_token: expect.any(Number), text_first_delta: expect.any(Number) },
      usage: expect.objectContaining({ llm_tokens_estimated: true }),
    });

    // Nothing of another turn is interleaved: every frame from asr to done is this turn's.
    const from = indexOf(client, (f) => f === reply.asr);
    const to = indexOf(client, (f) => f === reply.done);
    expect(client.frames.slice(from, to + 1).every((f) => 'turn_id' in f && f.turn_id === reply.turnId)).toBe(true);
    client.close();
    client.assertProtocol();
  });

  it('every reply gets its own turn_id', async () => {
    const { client } = openText(fast, { greeting: false });
    const a = await say(client, 'hello');
    const b = await say(client, 'thanks');
    expect(a.turnId).not.toBe(b.turnId);
    expect(b.utterance?.text).toBe("You're welcome.");
    client.close();
    client.assertProtocol();
  });

  it('the same text sent twice gets two complete replies', async () => {
    const { client } = openText(fast, { greeting: false });
    const a = await say(client, 'hello');
    const b = await say(client, 'hello');
    expect(a.done.status).toBe('completed');
    expect(b.done.status).toBe('completed');
    expect(client.all('asr')).toHaveLength(2);
    client.close();
    client.assertProtocol();
  });
});

describe('greeting', () => {
  it('default: a welcome turn with the default greeting before any input', async () => {
    const { client } = openText(fast);
    const turn = await client.waitFor('turn');
    expect(turn.welcome).toBe(true);
    const welcome = await waitTurn(client, turn.turn_id);
    expect(welcome.types[0]).toBe('turn');
    expect(welcome.types.slice(-2)).toEqual(['utterance', 'done']);
    expect(welcome.deltas).toBe(DEFAULT_GREETING);
    expect(welcome.utterance?.text).toBe(DEFAULT_GREETING);
    expect(welcome.done.status).toBe('completed');
    expect(client.all('asr')).toHaveLength(0);
    expect(indexOf(client, (f) => f.type === 'ready')).toBeLessThan(indexOf(client, (f) => f === turn));
    client.close();
    client.assertProtocol();
  });

  it('greeting false: no turn before the first input', async () => {
    const { client } = openText(fast, { greeting: false });
    const reply = await say(client, 'hello');
    expect(client.all('turn').map((f) => f.turn_id)).toEqual([reply.turnId]);
    expect(client.all('turn')[0]?.welcome).toBeUndefined();
    expect(indexOf(client, (f) => f.type === 'turn')).toBeGreaterThan(indexOf(client, (f) => f === reply.asr));
    client.close();
    client.assertProtocol();
  });

  it('a custom greeting text is spoken instead of the default', async () => {
    const greeting = 'Welcome aboard, traveller.';
    const { client } = openText(fast, { greeting });
    const turn = await client.waitFor('turn', (f) => f.welcome === true);
    const welcome = await waitTurn(client, turn.turn_id);
    expect(welcome.utterance?.text).toBe(greeting);
    expect(welcome.deltas).toBe(greeting);
    client.close();
    client.assertProtocol();
  });

  it('only the greeting turn is marked welcome', async () => {
    const { client } = openText(fast);
    const reply = await say(client, 'hello');
    expect(client.all('turn').map((f) => f.welcome === true)).toEqual([true, false]);
    expect(client.all('turn')[1]?.turn_id).toBe(reply.turnId);
    client.close();
    client.assertProtocol();
  });
});

describe('conversation history', () => {
  it('remembers the name given earlier in the session', async () => {
    const { client } = openText(fast);
    const first = await say(client, 'my name is Ada');
    expect(first.utterance?.text).toBe('Nice to meet you, Ada. I will remember that.');
    await say(client, 'what is 2 plus 3');
    const second = await say(client, 'what is my name');
    expect(second.utterance?.text).toBe('Your name is Ada.');
    client.close();
    client.assertProtocol();
  });

  it('does not share history between sessions', async () => {
    const a = openText(fast);
    await say(a.client, 'my name is Grace');
    const b = openText(fast);
    const reply = await say(b.client, 'what is my name');
    expect(reply.utterance?.text).toBe("You haven't told me your name yet.");
    a.client.close();
    b.client.close();
    a.client.assertProtocol();
    b.client.assertProtocol();
  });
});

describe('set_voice', () => {
  it('a known voice → voice {voice, name}', async () => {
    const { client } = openText(fast, { greeting: false });
    client.send({ type: 'set_voice', voice: 'awb' });
    const voice = await client.waitFor('voice');
    expect(voice).toEqual({ type: 'voice', voice: 'awb', name: 'Awb' });
    await expectAlive(client);
    client.close();
    client.assertProtocol();
  });

  it('an unknown voice → error unknown_voice; the session continues', async () => {
    const { client } = openText(fast, { greeting: false });
    client.send({ type: 'set_voice', voice: 'nobody' });
    const error = await waitError(client, 'unknown_voice');
    expect(error.retryable).toBe(false);
    expect(client.all('voice')).toHaveLength(0);
    await expectAlive(client);
    client.send({ type: 'set_voice', voice: 'kal' });
    expect(await client.waitFor('voice')).toEqual({ type: 'voice', voice: 'kal', name: 'Kal' });
    expect(client.closed).toBeUndefined();
    client.close();
    client.assertProtocol();
  });
});

describe('reset', () => {
  it('clears the history and greets again', async () => {
    const { client } = openText(fast);
    await say(client, 'my name is Ada');
    const after = client.frames.length;
    client.send({ type: 'reset' });
    const turn = await client.waitFor('turn', (f) => f.welcome === true, WAIT_MS, after);
    const welcome = await waitTurn(client, turn.turn_id);
    expect(welcome.utterance?.text).toBe(DEFAULT_GREETING);
    expect(client.all('turn').filter((f) => f.welcome === true)).toHaveLength(2);
    const reply = await say(client, 'what is my name');
    expect(reply.utterance?.text).toBe("You haven't told me your name yet.");
    client.close();
    client.assertProtocol();
  });

  it('with greeting false, clears the history and stays silent', async () => {
    const { client } = openText(fast, { greeting: false });
    await say(client, 'my name is Ada');
    client.send({ type: 'reset' });
    const reply = await say(client, 'what is my name');
    expect(reply.utterance?.text).toBe("You haven't told me your name yet.");
    expect(client.all('turn')).toHaveLength(2);
    client.close();
    client.assertProtocol();
  });

  it('during a streaming reply: interrupts it, then greets', async () => {
    const { client } = openText(slow);
    const turnId = await startLongReply(client);
    const after = client.frames.length;
    client.send({ type: 'reset' });
    const done = await client.waitFor('done', (f) => f.turn_id === turnId);
    expect(done.status).toBe('interrupted');
    const welcome = await client.waitFor('turn', (f) => f.welcome === true, WAIT_MS, after);
    expect(indexOf(client, (f) => f === done)).toBeLessThan(indexOf(client, (f) => f === welcome));
    await waitTurn(client, welcome.turn_id);
    client.close();
    client.assertProtocol();
  });
});

describe('interrupt and cancel', () => {
  it.each(['interrupt', 'cancel'])('%s stops the reply: interrupted {clear, barge_seq 1}, done interrupted, no later deltas', async (spelling) => {
    const { client } = openText(slow, { greeting: false });
    const turnId = await startLongReply(client);
    client.send({ type: spelling });
    const interrupted = await client.waitFor('interrupted', (f) => f.turn_id === turnId);
    expect(interrupted).toEqual({ type: 'interrupted', turn_id: turnId, clear: true, barge_seq: 1 });
    const reply = await waitTurn(client, turnId);
    expect(reply.done.status).toBe('interrupted');

    const types = reply.types;
    const at = types.indexOf('interrupted');
    expect(types.slice(0, 2)).toEqual(['asr', 'turn']);
    expect(types.slice(2, at).every((type) => type === 'text_delta')).toBe(true);
    expect(types.at(-1)).toBe('done');
    expect(types.slice(at + 1, -1).every((type) => type === 'utterance')).toBe(true);
    // The reply really was cut short.
    expect(reply.deltas.split(' ').length).toBeLessThan(60);
    if (reply.utterance) {
      expect(reply.utterance.text).toBe(reply.deltas);
      expect(reply.utterance.barge_seq).toBe(1);
    }

    // Another full turn gives a stale stream every chance to leak; nothing of the old turn may follow.
    const iInterrupted = indexOf(client, (f) => f === interrupted);
    await say(client, 'say one two three four five');
    const late = client.frames.slice(iInterrupted + 1).filter((f) => 'turn_id' in f && f.turn_id === turnId && f.type === 'text_delta');
    expect(late).toEqual([]);
    expect(client.frames.slice(iInterrupted + 1).filter((f) => 'turn_id' in f && f.turn_id === turnId).map((f) => f.type).filter((x) => x !== 'utterance')).toEqual(['done']);
    client.close();
    client.assertProtocol();
  });

  it('a second interruption gets barge_seq 2', async () => {
    const { client } = openText(slow, { greeting: false });
    const first = await startLongReply(client);
    client.send({ type: 'interrupt' });
    await client.waitFor('done', (f) => f.turn_id === first);
    const second = await startLongReply(client);
    client.send({ type: 'cancel' });
    const interrupted = await client.waitFor('interrupted', (f) => f.turn_id === second);
    expect(interrupted.barge_seq).toBe(2);
    expect((await client.waitFor('done', (f) => f.turn_id === second)).status).toBe('interrupted');
    expect(client.all('interrupted').map((f) => f.barge_seq)).toEqual([1, 2]);
    client.close();
    client.assertProtocol();
  });

  it('interrupt with no reply in flight does nothing', async () => {
    const { client } = openText(fast, { greeting: false });
    await say(client, 'hello');
    client.send({ type: 'interrupt' });
    client.send({ type: 'cancel' });
    const reply = await say(client, 'hello again');
    expect(reply.done.status).toBe('completed');
    expect(reply.utterance?.barge_seq).toBe(0);
    expect(client.all('interrupted')).toEqual([]);
    expect(client.all('error')).toEqual([]);
    client.close();
    client.assertProtocol();
  });

  it('a new input_text while a reply streams interrupts it first', async () => {
    const { client } = openText(slow, { greeting: false });
    const first = await startLongReply(client);
    const reply = await say(client, 'say next');
    const interrupted = await client.waitFor('interrupted', (f) => f.turn_id === first);
    expect(interrupted.barge_seq).toBe(1);
    const doneFirst = await client.waitFor('done', (f) => f.turn_id === first);
    expect(doneFirst.status).toBe('interrupted');
    expect(indexOf(client, (f) => f === doneFirst)).toBeLessThan(indexOf(client, (f) => f === reply.asr));
    expect(reply.done.status).toBe('completed');
    expect(reply.utterance?.text).toBe('next');
    client.close();
    client.assertProtocol();
  });
});

describe('inject_context', () => {
  it('role user with the default reply: ack, asr with message_id, then the reply', async () => {
    const { client } = openText(fast, { greeting: false });
    client.send({ type: 'inject_context', message_id: 'msg-1', text: 'my name is Grace' });
    const ack = await client.waitFor('inject_context_ack', (f) => f.message_id === 'msg-1');
    expect(ack).toEqual({
      type: 'inject_context_ack', message_id: 'msg-1', accepted: true, role: 'user', input_source: 'text', reply_started: true, turn_id: expect.any(String),
    });
    const asr = await client.waitFor('asr', (f) => f.message_id === 'msg-1');
    expect(asr).toEqual({ type: 'asr', text: 'my name is Grace', message_id: 'msg-1', input_source: 'text', turn_id: ack.turn_id });
    const reply = await waitTurn(client, ack.turn_id as string);
    expect(reply.types[0]).toBe('asr');
    expect(reply.types.slice(-2)).toEqual(['utterance', 'done']);
    expect(reply.utterance?.text).toBe('Nice to meet you, Grace. I will remember that.');
    expect((await say(client, 'what is my name')).utterance?.text).toBe('Your name is Grace.');
    client.close();
    client.assertProtocol();
  });

  it('role user with reply false: ack and asr, history updated, no reply', async () => {
    const { client } = openText(fast, { greeting: false });
    client.send({ type: 'inject_context', message_id: 'quiet', text: 'my name is Linus', role: 'user', reply: false });
    const ack = await client.waitFor('inject_context_ack', (f) => f.message_id === 'quiet');
    expect(ack).toMatchObject({ accepted: true, role: 'user', input_source: 'text', reply_started: false });
    expect(ack.turn_id).toBeUndefined();
    const reply = await say(client, 'what is my name');
    expect(reply.utterance?.text).toBe('Your name is Linus.');
    expect(client.all('turn')).toHaveLength(1);
    client.close();
    client.assertProtocol();
  });

  it('role context: ack, no asr, no reply', async () => {
    const { client } = openText(fast, { greeting: false });
    client.send({ type: 'inject_context', message_id: 'ctx-1', text: 'The user is on the checkout page.', role: 'context' });
    const ack = await client.waitFor('inject_context_ack', (f) => f.message_id === 'ctx-1');
    expect(ack).toMatchObject({ type: 'inject_context_ack', message_id: 'ctx-1', accepted: true, role: 'context', input_source: 'context', reply_started: false });
    expect(ack.turn_id).toBeUndefined();
    await say(client, 'hello');
    expect(client.all('asr').map((f) => f.text)).toEqual(['hello']);
    expect(client.all('turn')).toHaveLength(1);
    client.close();
    client.assertProtocol();
  });

  it('role context with reply true: a reply starts, still no asr', async () => {
    const { client } = openText(fast, { greeting: false });
    client.send({ type: 'inject_context', message_id: 'ctx-r', text: 'The order shipped.', role: 'context', reply: true });
    const ack = await client.waitFor('inject_context_ack', (f) => f.message_id === 'ctx-r');
    expect(ack).toMatchObject({ accepted: true, role: 'context', input_source: 'context', reply_started: true, turn_id: expect.any(String) });
    const reply = await waitTurn(client, ack.turn_id as string);
    expect(reply.types.filter((type) => type !== 'inject_context_ack')[0]).toBe('turn');
    expect(reply.done.status).toBe('completed');
    expect(client.all('asr')).toHaveLength(0);
    client.close();
    client.assertProtocol();
  });

  it('a duplicate message_id: accepted, reply_started false, delivered once', async () => {
    const { client } = openText(fast, { greeting: false });
    client.send({ type: 'inject_context', message_id: 'dup', text: 'hello' });
    const first = await client.waitFor('inject_context_ack', (f) => f.message_id === 'dup');
    await waitTurn(client, first.turn_id as string);
    const after = client.frames.length;
    client.send({ type: 'inject_context', message_id: 'dup', text: 'hello' });
    const second = await client.waitFor('inject_context_ack', (f) => f.message_id === 'dup', WAIT_MS, after);
    expect(second).toMatchObject({ accepted: true, reply_started: false });
    expect(second.turn_id).toBeUndefined();
    await say(client, 'thanks');
    expect(client.all('asr').filter((f) => f.message_id === 'dup')).toHaveLength(1);
    expect(client.all('turn')).toHaveLength(2);
    client.close();
    client.assertProtocol();
  });

  it('while a reply is in flight: accepted, reply_started false, and the reply in flight runs on', async () => {
    const { client } = openText(slow, { greeting: false });
    const turnId = await startLongReply(client, 30);
    client.send({ type: 'inject_context', message_id: 'busy', text: 'a note from the host' });
    const ack = await client.waitFor('inject_context_ack', (f) => f.message_id === 'busy');
    expect(ack).toMatchObject({ accepted: true, role: 'user', input_source: 'text', reply_started: false });
    expect(ack.turn_id).toBeUndefined();
    const reply = await waitTurn(client, turnId);
    expect(reply.done.status).toBe('completed');
    expect(reply.deltas.trim().split(' ')).toHaveLength(30);
    expect(client.all('turn')).toHaveLength(1);
    client.close();
    client.assertProtocol();
  });
});

describe('trigger_reply', () => {
  it('starts a reply without a user turn', async () => {
    const { client } = openText(fast, { greeting: false });
    const after = client.frames.length;
    client.send({ type: 'trigger_reply' });
    const turn = await client.waitFor('turn', () => true, WAIT_MS, after);
    const reply = await waitTurn(client, turn.turn_id);
    expect(reply.types[0]).toBe('turn');
    expect(reply.types.slice(1, -2).every((type) => type === 'text_delta')).toBe(true);
    expect(reply.types.slice(-2)).toEqual(['utterance', 'done']);
    expect(reply.utterance?.text).toBe(reply.deltas);
    expect(reply.utterance?.text.length).toBeGreaterThan(0);
    expect(reply.done.status).toBe('completed');
    expect(client.all('asr')).toHaveLength(0);
    client.close();
    client.assertProtocol();
  });

  it('while a reply is in flight → error reply_in_progress; the reply runs on', async () => {
    const { client } = openText(slow, { greeting: false });
    const turnId = await startLongReply(client, 20);
    client.send({ type: 'trigger_reply' });
    const error = await waitError(client, 'reply_in_progress');
    expect(error.retryable).toBe(true);
    const reply = await waitTurn(client, turnId);
    expect(reply.done.status).toBe('completed');
    expect(client.all('turn')).toHaveLength(1);
    client.close();
    client.assertProtocol();
  });
});

describe('the model request', () => {
  let fake: FakeLanguageModel;
  beforeEach(() => {
    fake = new FakeLanguageModel();
  });
  const t = (): LanguageModel => fake;

  const body = (index: number) => fake.requests[index]!;

  it('carries the whole history (system, greeting as assistant, user turns) and mode.temperature', async () => {
    const { client } = openText(t, { temperature: 0.3, instructions: 'Speak like a pirate.' });
    // The greeting's turn runs from the next tick on: it is in the history once its done is out.
    await client.waitFor('done');
    const first = fake.requests.length;
    fake.enqueue({ text: 'Ahoy there, matey.' });
    const a = await say(client, 'hello');
    expect(a.utterance?.text).toBe('Ahoy there, matey.');
    expect(a.deltas).toBe('Ahoy there, matey.');
    expect(fake.requests.length).toBe(first + 1);
    const req1 = body(first);
    expect(req1.temperature).toBe(0.3);
    expect(req1.messages[0]?.role).toBe('system');
    expect(req1.messages[0]?.content).toContain('Speak like a pirate.');
    expect(req1.messages.slice(1)).toEqual([
      { role: 'assistant', content: DEFAULT_GREETING },
      { role: 'user', content: 'hello' },
    ]);

    fake.enqueue({ text: 'Arr, it be Tuesday.' });
    await say(client, 'what day is it');
    const req2 = body(first + 1);
    expect(req2.messages.slice(1)).toEqual([
      { role: 'assistant', content: DEFAULT_GREETING },
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'Ahoy there, matey.' },
      { role: 'user', content: 'what day is it' },
    ]);
    expect(req2.temperature).toBe(0.3);
    client.close();
    client.assertProtocol();
  });

  it('uses the deployment default temperature when mode.temperature is omitted', async () => {
    const { client } = openText(t, { greeting: false });
    const first = fake.requests.length;
    fake.enqueue({ text: 'ok' });
    await say(client, 'hi');
    expect(body(first).temperature).toBe(0.7);
    expect(body(first).messages.slice(1)).toEqual([{ role: 'user', content: 'hi' }]);
    client.close();
    client.assertProtocol();
  });

  it('the greeting is fixed text: it makes no model request', async () => {
    const first = fake.requests.length;
    const { client } = openText(t);
    const turn = await client.waitFor('turn', (f) => f.welcome === true);
    await waitTurn(client, turn.turn_id);
    expect(fake.requests.length).toBe(first);
    client.close();
    client.assertProtocol();
  });

  it('injected context (role context) is in the next model request, before the user turn', async () => {
    const { client } = openText(t, { greeting: false });
    client.send({ type: 'inject_context', message_id: 'ctx', text: 'The user is on the checkout page.', role: 'context' });
    await client.waitFor('inject_context_ack', (f) => f.message_id === 'ctx');
    const first = fake.requests.length;
    fake.enqueue({ text: 'You are at checkout.' });
    await say(client, 'where am I');
    expect(fake.requests.length).toBe(first + 1);
    const messages = body(first).messages;
    const ctx = messages.findIndex((m) => m.content.includes('The user is on the checkout page.'));
    expect(ctx).toBeGreaterThan(0);
    expect(['user', 'assistant']).not.toContain(messages[ctx]?.role);
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'where am I' });
    expect(ctx).toBeLessThan(messages.length - 1);
    client.close();
    client.assertProtocol();
  });

  it('an interrupted reply ends the model stream and the next request carries what was said', async () => {
    const { client } = openText(t, { greeting: false });
    fake.delayMs = 40;
    try {
      fake.enqueue({ text: Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ') });
      const after = client.frames.length;
      client.send({ type: 'input_text', text: 'talk a lot' });
      const asr = await client.waitFor('asr', () => true, WAIT_MS, after);
      await client.waitFor('text_delta', (f) => f.turn_id === asr.turn_id, WAIT_MS, after);
      client.send({ type: 'interrupt' });
      const reply = await waitTurn(client, asr.turn_id as string);
      expect(reply.done.status).toBe('interrupted');
      fake.delayMs = 0;
      const first = fake.requests.length;
      fake.enqueue({ text: 'ok' });
      await say(client, 'go on');
      const messages = body(first).messages;
      expect(messages.at(-1)).toEqual({ role: 'user', content: 'go on' });
      expect(messages.at(-2)).toEqual({ role: 'assistant', content: reply.deltas });
    } finally {
      fake.delayMs = 0;
    }
    client.close();
    client.assertProtocol();
  });

  it('text injected while a reply streams goes after that reply in the history, not before it', async () => {
    // The reply answers the user turn before it; the note arrived while it was being written.
    // The next request must not present the reply as the answer to the note.
    const { client } = openText(t, { greeting: false });
    fake.delayMs = 30;
    try {
      fake.enqueue({ text: 'one two three four five six seven eight' });
      const after = client.frames.length;
      client.send({ type: 'input_text', text: 'count to eight' });
      const asr = await client.waitFor('asr', () => true, WAIT_MS, after);
      await client.waitFor('text_delta', (f) => f.turn_id === asr.turn_id, WAIT_MS, after);
      client.send({ type: 'inject_context', message_id: 'mid-reply', text: 'note from the host', reply: false });
      const ack = await client.waitFor('inject_context_ack', (f) => f.message_id === 'mid-reply');
      expect(ack).toMatchObject({ accepted: true, reply_started: false });
      const done = await client.waitFor('done', (f) => f.turn_id === asr.turn_id);
      expect(done.status).toBe('completed');
    } finally {
      fake.delayMs = 0;
    }
    const first = fake.requests.length;
    fake.enqueue({ text: 'ok' });
    await say(client, 'next');
    expect(body(first).messages.slice(1)).toEqual([
      { role: 'user', content: 'count to eight' },
      { role: 'assistant', content: 'one two three four five six seven eight' },
      { role: 'user', content: 'note from the host' },
      { role: 'user', content: 'next' },
    ]);
    client.close();
    client.assertProtocol();
  });

  it('trigger_reply instructions reach that request only', async () => {
    const { client } = openText(t, { greeting: false });
    const first = fake.requests.length;
    fake.enqueue({ text: 'Here is a summary.' }, { text: 'ok' });
    const after = client.frames.length;
    client.send({ type: 'trigger_reply', instructions: 'Summarise the call.' });
    const turn = await client.waitFor('turn', () => true, WAIT_MS, after);
    const reply = await waitTurn(client, turn.turn_id);
    expect(reply.utterance?.text).toBe('Here is a summary.');
    expect(body(first).messages.some((m) => m.content.includes('Summarise the call.'))).toBe(true);
    await say(client, 'thanks');
    expect(body(first + 1).messages.some((m) => m.content.includes('Summarise the call.'))).toBe(false);
    client.close();
    client.assertProtocol();
  });
});
