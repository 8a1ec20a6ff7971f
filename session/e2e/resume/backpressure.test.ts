import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../../signaling/testing/test-server.ts';
import { startSession } from '../../../signaling/testing/ws-test-client.ts';
import { sid } from '../../../signaling/testing/conversation.ts';

let t: TestServer;
beforeAll(async () => {
  // The heartbeat is far off: only the backlog check can find the clients below.
  t = await startTestServer({ AUDIO_BACKLOG_BYTES: '20000', SEND_BACKLOG_LIMIT_BYTES: '200000', SLOW_CONSUMER_MS: '500', HEARTBEAT_INTERVAL_MS: '120000' });
});
afterAll(async () => {
  await t.stop();
});

describe('a client that stops reading', () => {
  it('loses audio first, keeps every control frame in order, and is closed as a slow consumer (resumable)', { timeout: 60000 }, async () => {
    const sessionId = sid('slow');
    const greeting = 'This greeting is long enough to keep audio flowing while the reader is stalled. '.repeat(4);
    const { client, ready } = await startSession(t.wsUrl, {
      session_id: sessionId, api_key: t.key, mode: { kind: 'service', greeting }, audio: { sr: 16000, output_encoding: 'pcm_f32le', output_sr: 48000 },
    });
    const socket = (client.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    const stalledAt = performance.now();
    // Each of these earns an error frame the stalled reader never reads: the kernel buffers
    // fill, then the server's own queue grows past its limit.
    // A fixed volume (about 11 MB of answers), not a fixed time: on a loaded machine the server
    // answers more slowly, but the answers still outgrow every buffer on the way.
    const pad = 'x'.repeat(180);
    let sent = 0;
    while (sent < 40000 && !client.closed) {
      for (let i = 0; i < 500; i += 1) client.send({ type: 'tool_result', id: `${pad}-${sent++}`, content: null });
      // Let the socket take the batch before the next one.
      await new Promise((r) => setImmediate(r));
    }
    // Stay stalled until the server gives up on us: it stashes the call as it closes it.
    await t.whenStashed(ready.resume_token);
    socket.resume();
    const closed = await client.waitClose(30000);
    expect(closed.code).toBe(4429);
    const errors = client.all('error');
    expect(errors.at(-1)).toMatchObject({ code: 'slow_consumer', retryable: true });
    // Control frames were never dropped: the answers arrive complete and in order up to the close.
    const answered = errors.filter((e) => e.code === 'unknown_tool_call').map((e) => Number(/-(\d+)"/.exec(e.detail)?.[1]));
    expect(answered.length).toBeGreaterThan(1000);
    answered.forEach((n, i) => expect(n).toBe(i));
    // Audio was what got dropped: far less than the stall's worth of real-time audio arrived.
    const stallSeconds = (performance.now() - stalledAt) / 1000;
    const audioSeconds = client.audio.reduce((sum, b) => sum + b.length, 0) / 4 / 48000;
    expect(audioSeconds).toBeLessThan(stallSeconds);

    const again = await startSession(t.wsUrl, { session_id: sessionId, api_key: t.key, resume_token: ready.resume_token, mode: { kind: 'service', modality: 'text' } });
    expect(again.ready.modality).toBe('text');
    again.client.close();
  });
});

describe('a client that floods, stops reading and goes quiet', () => {
  let quiet: TestServer;
  beforeAll(async () => {
    // The heartbeat is far off, and the flood takes well under SLOW_CONSUMER_MS: only a check
    // made while nothing is sent can find this client.
    quiet = await startTestServer({ SEND_BACKLOG_LIMIT_BYTES: '100000', SLOW_CONSUMER_MS: '3000', HEARTBEAT_INTERVAL_MS: '120000' });
  });
  afterAll(async () => {
    await quiet.stop();
  });

  it('is closed as a slow consumer once SLOW_CONSUMER_MS has passed, not left to the heartbeat', { timeout: 60000 }, async () => {
    const { client } = await startSession(quiet.wsUrl, { session_id: sid('quiet'), api_key: quiet.key, mode: { kind: 'service', modality: 'text', greeting: false } });
    const socket = (client.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    // Each refusal echoes the 200-character id and handle: about 7 MB of answers, past the
    // kernel's buffers and then the server's limit.
    const id = 'i'.repeat(200);
    const handle = 'h'.repeat(200);
    for (let n = 0; n < 16000; n += 1) client.send({ type: 'tool_deferred', id, handle });
    // Then nothing more is sent by either side, until the server lets the session go (the
    // heartbeat, 120 s off, cannot be what finds it).
    await quiet.whenSessions(0);
    socket.resume();
    const closed = await client.waitClose(10000);
    expect(closed.code).toBe(4429);
    expect(client.all('error').at(-1)).toMatchObject({ code: 'slow_consumer', retryable: true });
  });
});
