import { describe, expect, it } from 'vitest';
import { waitError } from '../testing/conversation.ts';
import { FakeLanguageModel } from '../testing/fake-llm.ts';
import { openTestSession, useFakeClock, type TestSession } from '../testing/test-session.ts';

/**
 * The model calls two client tools in one turn; one result arrives, then the connection drops
 * while the other call is open. The resumed conversation must hold the arrived result (the
 * snapshot is taken after the interrupted round records it), take the open call's result, and
 * recognise a re-sent result as already answered. The token exchange over a real drop:
 * e2e/resume/resume.test.ts.
 */

useFakeClock();

const tools = ['alpha', 'beta'].map((name) => ({ name, parameters: { type: 'object', properties: {} } }));
const occurrences = (haystack: string, needle: string): number => haystack.split(needle).length - 1;

/** Waits until the session has handled every frame sent so far (set_voice is answered in order). */
async function flush(client: TestSession): Promise<void> {
  const after = client.frames.length;
  client.send({ type: 'set_voice', voice: 'slt' });
  await client.waitFor('voice', () => true, 1000, after);
}

describe('a tool result across a drop', () => {
  it('arrived before the drop: kept; the other call takes its result after the resume; a re-send changes nothing', async () => {
    const llm = new FakeLanguageModel();
    const lastRequestText = (): string => JSON.stringify(llm.requests.at(-1)!.messages);
    const first = openTestSession({ llm, mode: { greeting: false, tools } });
    llm.enqueue({ toolCalls: [{ id: 'call-a', name: 'alpha' }, { id: 'call-b', name: 'beta' }] });
    first.send({ type: 'input_text', text: 'run both' });
    await first.waitFor('tool_call', (f) => f.id === 'call-b');
    first.send({ type: 'tool_result', id: 'call-a', content: 'ALPHA-RESULT', outcome: 'succeeded', verified: true });
    await flush(first);

    const again = openTestSession({ llm, resume: await first.drop() });
    llm.enqueue({ text: 'Beta is in.' });
    again.send({ type: 'tool_result', id: 'call-b', content: 'BETA-RESULT', outcome: 'succeeded', verified: true });
    // The late result is told when the floor is free.
    await again.waitFor('done');

    const asked = again.frames.length;
    llm.enqueue({ text: 'Both done.' }, { text: 'Still both.' });
    again.send({ type: 'input_text', text: 'what did they say?' });
    await again.waitFor('done', (f) => f.status === 'completed', 1000, asked);
    expect(lastRequestText()).toContain('what did they say?');
    expect(occurrences(lastRequestText(), 'ALPHA-RESULT'), 'the result that arrived before the drop').toBe(1);
    expect(occurrences(lastRequestText(), 'BETA-RESULT'), 'the result sent after the resume').toBe(1);

    // A client unsure whether its result crossed the drop sends it again: answered, not doubled.
    const resent = again.frames.length;
    again.send({ type: 'tool_result', id: 'call-a', content: 'ALPHA-RESULT', outcome: 'succeeded', verified: true });
    const error = await waitError(again, 'unknown_tool_call', resent);
    expect(error.detail).toContain('already closed');
    again.send({ type: 'input_text', text: 'and now?' });
    await again.waitFor('done', (f) => f.status === 'completed', 1000, resent);
    expect(lastRequestText()).toContain('and now?');
    expect(occurrences(lastRequestText(), 'ALPHA-RESULT')).toBe(1);
    again.assertProtocol();
  });
});
