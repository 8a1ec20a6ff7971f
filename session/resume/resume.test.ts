import { describe, expect, it } from 'vitest';
import { FakeLanguageModel } from '../testing/fake-llm.ts';
import { openTestSession, passTime, useFakeClock, type TestSession } from '../testing/test-session.ts';
import { MemoryResumeStash } from './resume-stash.ts';
import type { StashEntry } from './snapshot.ts';

/**
 * What a resumed conversation keeps (SPEC "Resume"): the session's snapshot at the drop, restored
 * into a new session. The token exchange over a real drop, and the refusals: session/e2e/resume/.
 */

useFakeClock();

async function say(client: TestSession, text: string): Promise<string> {
  const after = client.frames.length;
  client.send({ type: 'input_text', text });
  const asr = await client.waitFor('asr', (f) => f.text === text, 1000, after);
  await client.waitFor('done', (f) => f.turn_id === asr.turn_id);
  return asr.turn_id!;
}

const lines = (llm: FakeLanguageModel, index: number) => llm.requests[index]!.messages.map((m) => `${m.role}:${m.content}`);

describe('resume: what the conversation keeps', () => {
  it('an idle drop resumes with the full history and no second greeting', async () => {
    const llm = new FakeLanguageModel();
    const first = openTestSession({ llm, mode: { greeting: 'Hi there.' } });
    await first.waitFor('done');
    llm.enqueue({ text: 'Nice to meet you, Ada.' });
    await say(first, 'my name is Ada');
    const again = openTestSession({ llm, resume: await first.drop(), mode: { greeting: 'Hi there.' } });
    llm.enqueue({ text: 'You are Ada.' });
    const before = llm.requests.length;
    await say(again, 'who am I?');
    const contents = lines(llm, before);
    expect(contents).toContain('assistant:Hi there.');
    expect(contents).toContain('user:my name is Ada');
    expect(contents).toContain('assistant:Nice to meet you, Ada.');
    expect(contents.at(-1)).toBe('user:who am I?');
    // No greeting after the resume: the first turn is the answer to "who am I?".
    expect(again.all('turn')).toHaveLength(1);
    again.assertProtocol();
  });

  it('a drop mid-reply keeps what was sent and never speaks the reply again', async () => {
    const llm = new FakeLanguageModel();
    const first = openTestSession({ llm, mode: { greeting: false } });
    llm.enqueue({ text: 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen', delayMs: 40 });
    first.send({ type: 'input_text', text: 'count' });
    const turn = await first.waitFor('turn');
    await first.waitFor('text_delta', (f) => f.delta.includes('three'));
    const snapshot = await first.drop();
    const sent = first.all('text_delta').filter((d) => d.turn_id === turn.turn_id).map((d) => d.delta).join('');

    const again = openTestSession({ llm, resume: snapshot });
    const before = llm.requests.length;
    await say(again, 'go on');
    const assistant = llm.requests[before]!.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
    expect(assistant.at(-1)).toBe(sent);
    expect(again.frames.some((f) => 'turn_id' in f && f.turn_id === turn.turn_id)).toBe(false);
  });

  it('a tool call open at the drop accepts its result after the resume and narrates it', async () => {
    const llm = new FakeLanguageModel();
    const tools = [{ name: 'lookup_order', parameters: { type: 'object', properties: { id: { type: 'string' } } } }];
    const first = openTestSession({ llm, mode: { greeting: false, tools } });
    llm.enqueue({ toolCalls: [{ id: 'call_1', name: 'lookup_order', args: { id: '42' } }] });
    first.send({ type: 'input_text', text: 'where is my order 42?' });
    await first.waitFor('tool_call');

    const again = openTestSession({ llm, resume: await first.drop() });
    llm.enqueue({ text: 'Your order has shipped.' });
    const before = llm.requests.length;
    again.send({ type: 'tool_result', id: 'call_1', content: { status: 'shipped' }, outcome: 'succeeded', verified: true });
    const turn = await again.waitFor('turn');
    await again.waitFor('done', (f) => f.turn_id === turn.turn_id);
    expect(again.all('error')).toHaveLength(0);
    expect(JSON.stringify(llm.requests[before]!.messages)).toContain('shipped');
    again.assertProtocol();
  });

  it('a deferred job is re-associated with tool_deferred_resume', async () => {
    const llm = new FakeLanguageModel();
    const first = openTestSession({ llm, mode: { greeting: false, tools: [{ name: 'book_table', deferrable: true }] } });
    llm.enqueue({ toolCalls: [{ id: 'call_9', name: 'book_table', args: {} }] }, { text: 'I am booking it.' });
    first.send({ type: 'input_text', text: 'book a table' });
    await first.waitFor('tool_call');
    first.send({ type: 'tool_deferred', id: 'call_9', handle: 'h-9', status_label: 'Booking' });
    const ack = await first.waitFor('tool_deferred_ack');
    expect(ack.accepted).toBe(true);
    await first.waitFor('done');

    const again = openTestSession({ llm, resume: await first.drop() });
    const resumed = await again.waitFor('tool_deferred_resume');
    expect(resumed).toEqual({ type: 'tool_deferred_resume', id: 'call_9', handle: 'h-9', name: 'book_table', job_id: ack.job_id, status_label: 'Booking' });
    again.assertProtocol();
  });

  it('explicit mode fields override the restored configuration', async () => {
    const llm = new FakeLanguageModel();
    const first = openTestSession({ llm, mode: { greeting: false, instructions: 'Speak like a pirate.', temperature: 0.2 } });
    const again = openTestSession({ llm, resume: await first.drop(), mode: { temperature: 1.1 } });
    await say(again, 'hello');
    expect(llm.requests[0]!.temperature).toBe(1.1);
    expect(llm.requests[0]!.messages[0]!.content).toContain('Speak like a pirate.');
  });
});

describe('the in-memory resume stash', () => {
  const entry = { account: 'acme', sessionId: 's1', snapshot: {} } as StashEntry;

  it('a token works once, for its owner, until its time to live passes', async () => {
    const stash = new MemoryResumeStash(2000);
    const owner = { account: 'acme', sessionId: 's1' };
    expect(await stash.save('rt_a', entry)).toBe('saved');
    expect(await stash.take('rt_a', { account: 'acme', sessionId: 's2' })).toEqual({ status: 'not_owner' });
    const taken = await stash.take('rt_a', owner);
    expect(taken.status === 'resumed' && taken.entry).toBe(entry);
    expect(await stash.take('rt_a', owner)).toEqual({ status: 'unknown' });
    // A late save from the process that held the conversation cannot bring it back.
    expect(await stash.save('rt_a', entry)).toBe('taken');

    await stash.save('rt_b', entry);
    await passTime(1999);
    expect(stash.size).toBe(1);
    await passTime(2);
    expect(stash.size).toBe(0);
    expect(await stash.take('rt_b', owner)).toEqual({ status: 'unknown' });
    stash.close();
  });
});
