import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAlive, openText, say, sid, voiceStart, waitError } from '../testing/conversation.ts';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
import { startSession, WsTestClient } from '../testing/ws-test-client.ts';

/**
 * Malformed input after a successful start: each gets an error frame with a stable code, and the
 * session stays alive (a full input_text round trip works right after).
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

/** Sends `frame`, expects exactly one new error with `code` (retryable false), then a working turn. */
async function expectNonFatal(client: WsTestClient, frame: unknown, code: string, binary = false): Promise<void> {
  const after = client.frames.length;
  if (binary) client.sendBinary(frame as Uint8Array);
  else client.send(frame);
  const error = await waitError(client, code, after);
  expect(error.retryable).toBe(false);
  expect(error.detail.length).toBeGreaterThan(0);
  await expectAlive(client);
  expect(client.closed).toBeUndefined();
  const newErrors = client.frames.slice(after).filter((f) => f.type === 'error');
  expect(newErrors.map((e) => (e as { code: string }).code)).toEqual([code]);
}

describe('malformed frames in a text session', () => {
  let client: WsTestClient;
  beforeAll(async () => {
    ({ client } = await openText(t, { greeting: false }));
  });
  afterAll(() => {
    client.assertProtocol();
    client.close();
  });

  it('invalid JSON → invalid_json', async () => {
    await expectNonFatal(client, '{"type": "input_text", "text": ', 'invalid_json');
    await expectNonFatal(client, 'not json at all', 'invalid_json');
  });

  it('unknown type → unknown_frame_type', async () => {
    await expectNonFatal(client, { type: 'teleport' }, 'unknown_frame_type');
  });

  it('a JSON value that is not an object, or has no string type → invalid_frame', async () => {
    await expectNonFatal(client, '[]', 'invalid_frame');
    await expectNonFatal(client, '42', 'invalid_frame');
    await expectNonFatal(client, { text: 'no type' }, 'invalid_frame');
    await expectNonFatal(client, { type: 7 }, 'invalid_frame');
  });

  it('input_text breaking its schema → invalid_frame', async () => {
    await expectNonFatal(client, { type: 'input_text', text: '' }, 'invalid_frame');
    await expectNonFatal(client, { type: 'input_text', text: 'x'.repeat(20001) }, 'invalid_frame');
    await expectNonFatal(client, { type: 'input_text' }, 'invalid_frame');
    await expectNonFatal(client, { type: 'input_text', text: 42 }, 'invalid_frame');
  });

  it('input_text of exactly 20000 characters is accepted', async () => {
    const reply = await say(client, 'y'.repeat(20000));
    expect(reply.done.status).toBe('completed');
  });

  it('other frames breaking their schema → invalid_frame', async () => {
    await expectNonFatal(client, { type: 'set_voice' }, 'invalid_frame');
    await expectNonFatal(client, { type: 'inject_context', text: 'no message id' }, 'invalid_frame');
    await expectNonFatal(client, { type: 'inject_context', message_id: 'm'.repeat(129), text: 'x' }, 'invalid_frame');
    await expectNonFatal(client, { type: 'ambience' }, 'invalid_frame');
  });

  it('a second start → already_started', async () => {
    await expectNonFatal(client, { type: 'start', session_id: sid(), mode: { kind: 'service', modality: 'text' }, api_key: t.key }, 'already_started');
    expect(client.all('ready')).toHaveLength(1);
  });

  it('a binary frame → modality_mismatch', async () => {
    await expectNonFatal(client, new Uint8Array(320), 'modality_mismatch', true);
  });
});

describe('two start frames sent back to back', () => {
  it('the first starts the session, the second gets already_started', async () => {
    const client = await WsTestClient.open(t.wsUrl);
    const start = { type: 'start', session_id: sid(), mode: { kind: 'service', modality: 'text', greeting: false }, api_key: t.key };
    client.send(start);
    client.send(start);
    await client.waitFor('ready');
    const error = await waitError(client, 'already_started');
    expect(error.retryable).toBe(false);
    await expectAlive(client);
    expect(client.all('ready')).toHaveLength(1);
    client.close();
    client.assertProtocol();
  });
});

describe('malformed frames in a voice session', () => {
  it('input_text → modality_mismatch; the session stays open', async () => {
    const { client } = await startSession(t.wsUrl, { ...voiceStart(sid(), { greeting: false }), api_key: t.key });
    client.send({ type: 'input_text', text: 'hello' });
    const error = await waitError(client, 'modality_mismatch');
    expect(error.retryable).toBe(false);
    expect(client.all('asr')).toHaveLength(0);
    // Still alive: a set_voice is answered.
    client.send({ type: 'set_voice', voice: 'rms' });
    await client.waitFor('voice', (f) => f.voice === 'rms');
    expect(client.closed).toBeUndefined();
    client.close();
    client.assertProtocol();
  });
});

describe('frame size limits', () => {
  let small: TestServer;
  beforeAll(async () => {
    small = await startTestServer({ MAX_FRAME_BYTES: '4096' });
  });
  afterAll(async () => {
    await small.stop();
  });

  it('a text frame over MAX_FRAME_BYTES → frame_too_large; the session stays alive', async () => {
    const { client } = await openText(small, { greeting: false });
    await expectNonFatal(client, { type: 'input_text', text: 'z'.repeat(5000) }, 'frame_too_large');
    client.close();
    client.assertProtocol();
  });

  it('a binary frame over MAX_FRAME_BYTES → frame_too_large; the session stays alive', async () => {
    const { client } = await openText(small, { greeting: false });
    await expectNonFatal(client, new Uint8Array(8192), 'frame_too_large', true);
    client.close();
    client.assertProtocol();
  });

  it('a frame just under MAX_FRAME_BYTES is handled normally', async () => {
    const { client } = await openText(small, { greeting: false });
    const text = 'w'.repeat(4000);
    const reply = await say(client, text);
    expect(reply.done.status).toBe('completed');
    expect(client.all('error')).toEqual([]);
    client.close();
    client.assertProtocol();
  });

  it('a frame over MAX_FRAME_BYTES before start → frame_too_large, then a start still works', async () => {
    const client = await WsTestClient.open(small.wsUrl);
    client.send({ type: 'start', pad: 'p'.repeat(5000) });
    await waitError(client, 'frame_too_large');
    client.send({ type: 'start', session_id: sid(), mode: { kind: 'service', modality: 'text', greeting: false }, api_key: small.key });
    await client.waitFor('ready');
    await expectAlive(client);
    client.close();
    client.assertProtocol();
  });

  it('a frame over the hard cap (> 1 MiB) closes the socket with 1009', async () => {
    const { client } = await openText(small, { greeting: false });
    client.send({ type: 'input_text', text: 'h'.repeat(1024 * 1024 + 16) });
    const closed = await client.waitClose();
    expect(closed.code).toBe(1009);
    client.assertProtocol();
    // The server lives on.
    const next = await openText(small, { greeting: false });
    await expectAlive(next.client);
    next.client.close();
    next.client.assertProtocol();
  });

  it('the hard cap also applies with the default MAX_FRAME_BYTES', async () => {
    const { client } = await openText(t, { greeting: false });
    client.sendBinary(new Uint8Array(1024 * 1024 + 1));
    const closed = await client.waitClose();
    expect(closed.code).toBe(1009);
  });
});

describe('robustness', () => {
  it('after every kind of bad input, the server still takes new sessions', async () => {
    const { client } = await openText(t);
    for (const raw of ['', '{', 'null', '{"type":null}', '{"type":"start"}', '{"type":"__proto__"}', '{"type":"constructor"}', '{"type":"toString"}', '{"__proto__":{"type":"reset"}}']) {
      client.send(raw);
    }
    client.sendBinary(new Uint8Array(0));
    client.sendBinary(new Uint8Array([0xff, 0xfe, 0xfd]));
    await expectAlive(client);
    expect(client.closed).toBeUndefined();
    client.close();
    client.assertProtocol();

    const fresh = await openText(t);
    await expectAlive(fresh.client);
    fresh.client.close();
    fresh.client.assertProtocol();
    const health = await fetch(`${t.url}/healthz`);
    expect(health.status).toBe(200);
  });
});
