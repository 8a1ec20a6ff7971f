import { describe, expect, it } from 'vitest';
import { sid, textStart, waitError, WAIT_MS } from '../../../signaling/testing/conversation.ts';
import { useServerWithFakeModel } from '../../../signaling/testing/fake-model-server.ts';
import { startSession, WsTestClient } from '../../../signaling/testing/ws-test-client.ts';

/**
 * The model calls two client tools in one turn; one result arrives, then the socket drops while
 * the other call is open. The resumed conversation must hold the arrived result (the snapshot is
 * taken after the interrupted round records it), take the open call's result, and recognise a
 * re-sent result as already answered.
 */
const servers = useServerWithFakeModel({ RESUME_TTL_S: '30' });

const tools = ['alpha', 'beta'].map((name) => ({ name, parameters: { type: 'object', properties: {} } }));

type Message = { role: string; content: string | null; tool_call_id?: string };
const lastRequestText = (): string => JSON.stringify((servers.fake.requests.at(-1) as { messages: Message[] }).messages);
const occurrences = (haystack: string, needle: string): number => haystack.split(needle).length - 1;

/** Waits until the server has handled every frame sent so far (set_voice is answered in order). */
async function flush(client: WsTestClient, voice: string): Promise<void> {
  const after = client.frames.length;
  client.send({ type: 'set_voice', voice });
  await client.waitFor('voice', () => true, WAIT_MS, after);
}

describe('a tool result across a drop', () => {
  it('arrived before the drop: kept; the other call takes its result after the resume; a re-send changes nothing', async () => {
    const sessionId = sid('two-calls');
    const { client, ready } = await startSession(servers.t.wsUrl, { ...textStart(sessionId, { greeting: false, tools }), api_key: servers.t.key });
    const voice = ready.voice;
    const [idA, idB] = [`a-${sid()}`, `b-${sid()}`];
    servers.fake.enqueue({ toolCalls: [{ id: idA, name: 'alpha', args: {} }, { id: idB, name: 'beta', args: {} }] });
    client.send({ type: 'input_text', text: 'run both' });
    await client.waitFor('tool_call', (f) => f.id === idB);
    client.send({ type: 'tool_result', id: idA, content: 'ALPHA-RESULT', outcome: 'succeeded', verified: true });
    await flush(client, voice);
    client.ws.terminate();
    await client.waitClose();
    await servers.t.whenStashed(ready.resume_token);

    const again = await startSession(servers.t.wsUrl, { ...textStart(sessionId, { greeting: false }), api_key: servers.t.key, resume_token: ready.resume_token });
    servers.fake.enqueue({ text: 'Beta is in.' });
    const after = again.client.frames.length;
    again.client.send({ type: 'tool_result', id: idB, content: 'BETA-RESULT', outcome: 'succeeded', verified: true });
    // The late result is told when the floor is free.
    await again.client.waitFor('done', () => true, WAIT_MS, after);

    const asked = again.client.frames.length;
    servers.fake.enqueue({ text: 'Both done.' }, { text: 'Still both.' });
    again.client.send({ type: 'input_text', text: 'what did they say?' });
    await again.client.waitFor('done', (f) => f.status === 'completed', WAIT_MS, asked);
    // The fake model records a request as it arrives, so the completed turn's request is in.
    expect(lastRequestText()).toContain('what did they say?');
    expect(occurrences(lastRequestText(), 'ALPHA-RESULT'), 'the result that arrived before the drop').toBe(1);
    expect(occurrences(lastRequestText(), 'BETA-RESULT'), 'the result sent after the resume').toBe(1);

    // A client unsure whether its result crossed the drop sends it again: answered, not doubled.
    const resent = again.client.frames.length;
    again.client.send({ type: 'tool_result', id: idA, content: 'ALPHA-RESULT', outcome: 'succeeded', verified: true });
    const error = await waitError(again.client, 'unknown_tool_call', resent);
    expect(error.detail).toContain('already closed');
    again.client.send({ type: 'input_text', text: 'and now?' });
    await again.client.waitFor('done', (f) => f.status === 'completed', WAIT_MS, resent);
    expect(lastRequestText()).toContain('and now?');
    expect(occurrences(lastRequestText(), 'ALPHA-RESULT')).toBe(1);
    again.client.close();
    again.client.assertProtocol();
  });
});
