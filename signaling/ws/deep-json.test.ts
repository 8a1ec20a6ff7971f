import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../session/protocol/limits.ts';
import { expectAlive, expectFatal, openText, sid, textStart, waitError, WAIT_MS } from '../testing/conversation.ts';
import { deepArray, deepJson } from '../testing/deep-json.ts';
import { useServerWithFakeModel } from '../testing/fake-model-server.ts';
import { startSession, WsTestClient } from '../testing/ws-test-client.ts';

/**
 * Every place that parses or copies client JSON is bounded at the parse boundary: a frame nested
 * past LIMITS.jsonDepth is refused with a clear error, nothing in it is used, the session goes on,
 * and no later copy (the resume snapshot on a drop) can overflow the stack.
 */
const DEEP = 3000;

const servers = useServerWithFakeModel({ RESUME_TTL_S: '30' });

const tool = { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } };

async function openWithTool(): Promise<{ client: WsTestClient; resumeToken: string; sessionId: string }> {
  const sessionId = sid('deep');
  const { client, ready } = await startSession(servers.t.wsUrl, { ...textStart(sessionId, { greeting: false, tools: [tool] }), api_key: servers.t.key });
  return { client, resumeToken: ready.resume_token, sessionId };
}

/** The model calls `lookup` once; resolves with the call id the client saw. */
async function callLookup(client: WsTestClient): Promise<string> {
  servers.fake.enqueue({ toolCalls: [{ id: `c-${sid()}`, name: 'lookup', args: { q: 'x' } }] }, { text: 'done looking' });
  client.send({ type: 'input_text', text: 'look it up' });
  return (await client.waitFor('tool_call')).id;
}

describe('deep JSON in a live session is refused and the session lives on', () => {
  const frames: [string, (callId: string) => string][] = [
    ['set_tools with deep parameters', () => `{"type":"set_tools","tools":[{"name":"x","parameters":${deepJson(DEEP)}}]}`],
    ['a tool_result with deep content', (id) => `{"type":"tool_result","id":"${id}","content":${deepJson(DEEP)}}`],
    ['a tool_partial_result with deep content', (id) => `{"type":"tool_partial_result","id":"${id}","content":${deepArray(DEEP)}}`],
    [
      'a tool_partial_result whose resolver args are deep',
      (id) => `{"type":"tool_partial_result","id":"${id}","content":"?","interaction":{"prompt":"ok?","options":["yes"],"resolver":{"tool":"lookup","args":${deepJson(DEEP)}}}}`,
    ],
  ];

  it.each(frames)('%s → invalid_frame; the call still resolves; a drop then stashes and resumes', async (_name, frame) => {
    const { client, resumeToken, sessionId } = await openWithTool();
    const callId = await callLookup(client);
    const after = client.frames.length;
    client.send(frame(callId));
    const error = await waitError(client, 'invalid_frame', after);
    expect(error.detail).toContain(`deeper than ${LIMITS.jsonDepth}`);
    expect(error.retryable).toBe(false);

    // Nothing of the refused frame was used: the call is still open and takes its real result.
    client.send({ type: 'tool_result', id: callId, content: { answer: 42 }, outcome: 'succeeded', verified: true });
    await client.waitFor('done', () => true, WAIT_MS, after);
    await expectAlive(client, 'are you there');

    // A drop (any close but 1000) copies the session into the resume stash.
    client.ws.close(4000);
    await client.waitClose();
    const again = await startSession(servers.t.wsUrl, { ...textStart(sessionId, { greeting: false }), api_key: servers.t.key, resume_token: resumeToken });
    await expectAlive(again.client, 'still there');
    again.client.close();
    client.assertProtocol();
    again.client.assertProtocol();
  });

  it('nesting exactly at the bound is accepted; one level more is refused', async () => {
    const { client } = await openWithTool();
    const callId = await callLookup(client);
    // The frame object is level 1 and content level 2: content nested (bound - 1) levels fits.
    const fits = `{"type":"tool_progress","id":"${callId}","note":"n","extra":${deepJson(LIMITS.jsonDepth - 2)}}`;
    const tooDeep = `{"type":"tool_progress","id":"${callId}","note":"n","extra":${deepJson(LIMITS.jsonDepth - 1)}}`;
    let after = client.frames.length;
    client.send(fits);
    client.send({ type: 'tool_result', id: callId, content: 'ok', outcome: 'succeeded' });
    await client.waitFor('done', () => true, WAIT_MS, after);
    expect(client.all('error')).toHaveLength(0);
    after = client.frames.length;
    client.send(tooDeep);
    await waitError(client, 'invalid_frame', after);
    client.close();
  });

  it('a model whose tool call arguments nest too deeply: the call is dropped, the reply ends, the session goes on', async () => {
    const { client } = await openWithTool();
    servers.fake.enqueue({ toolCalls: [{ name: 'lookup', args: `{"q":${deepJson(DEEP, '"x"')}}` }] });
    client.send({ type: 'input_text', text: 'look deeply' });
    await client.waitFor('done');
    expect(client.all('tool_call')).toHaveLength(0);
    await expectAlive(client, 'and now');
    client.ws.close(4000);
    await client.waitClose();
  });
});

describe('deep JSON where a session has not started', () => {
  it('a start frame with deep tool parameters → invalid_start_frame, close 4400; the process is unharmed', async () => {
    const client = await WsTestClient.open(servers.t.wsUrl);
    client.send(`{"type":"start","session_id":"${sid()}","api_key":"${servers.t.key}","mode":{"kind":"service","modality":"text","tools":[{"name":"x","parameters":${deepJson(DEEP)}}]}}`);
    const error = await expectFatal(client, 'invalid_start_frame', false, 4400);
    expect(error.detail).toContain('deeper than');
    const live = await openText(servers.t, { greeting: false });
    await expectAlive(live.client);
    live.client.close();
  });

  it('a one-shot client_error with a deep context → refused with the depth named, nothing stored', async () => {
    const client = await WsTestClient.open(servers.t.wsUrl);
    client.send(`{"type":"client_error","session_id":"s1","api_key":"${servers.t.key}","detail":"boom","context":${deepJson(DEEP)}}`);
    const error = await expectFatal(client, 'invalid_start_frame', false, 4400);
    expect(error.detail).toContain('client_error: JSON nested deeper');
  });

  it('an HTTP body nested too deeply → 400 invalid_request', async () => {
    const response = await fetch(`${servers.t.url}/api/v1/session-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${servers.t.key}`, 'content-type': 'application/json' },
      body: `{"session_id":"s1","x":${deepArray(5000)}}`,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'invalid_request', retryable: false });
  });
});
