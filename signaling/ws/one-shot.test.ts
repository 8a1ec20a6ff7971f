import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
import { WsTestClient } from '../testing/ws-test-client.ts';
import { sid } from '../testing/conversation.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

describe('one-shot reports (sendFeedback / sendClientError)', () => {
  it('stores feedback under DATA_DIR, acknowledges it and closes cleanly, with a scoped key after the call ended', async () => {
    const sessionId = sid('fb');
    const client = await WsTestClient.open(t.wsUrl);
    client.send({ type: 'feedback', session_id: sessionId, api_key: t.scopedKey(sessionId), rating: 4, text: 'clear voice', device: 'laptop', browser: 'Chromium' });
    const ack = await client.waitFor('feedback_ack');
    expect(ack.id).toMatch(/^fb_/);
    expect((await client.waitClose()).code).toBe(1000);
    client.assertProtocol();
    const lines = readFileSync(join(t.dataDir, 'feedback.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const stored = lines.find((l) => l.id === ack.id);
    expect(stored).toMatchObject({ session_id: sessionId, rating: 4, text: 'clear voice', account: 'acme' });
    expect(JSON.stringify(stored)).not.toContain('sk_');
  });

  it('stores client errors the same way', async () => {
    const sessionId = sid('ce');
    const client = await WsTestClient.open(t.wsUrl, { Authorization: `Bearer ${t.key}` });
    client.send({ type: 'client_error', session_id: sessionId, detail: 'AudioContext failed', context: { state: 'suspended' } });
    const ack = await client.waitFor('client_error_ack');
    await client.waitClose();
    const stored = readFileSync(join(t.dataDir, 'client-errors.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).find((l) => l.id === ack.id);
    expect(stored).toMatchObject({ detail: 'AudioContext failed', context: { state: 'suspended' } });
  });

  it('refuses a report without a valid key, and one sent inside a conversation', async () => {
    const client = await WsTestClient.open(t.wsUrl);
    client.send({ type: 'feedback', session_id: 'x', rating: 'up' });
    expect((await client.waitFor('error')).code).toBe('unauthorized');
    expect((await client.waitClose()).code).toBe(4401);

    const convo = await WsTestClient.open(t.wsUrl);
    convo.send({ type: 'start', session_id: sid(), api_key: t.key, mode: { kind: 'service', modality: 'text', greeting: false } });
    await convo.waitFor('ready');
    convo.send({ type: 'feedback', session_id: 'x', rating: 'down' });
    expect((await convo.waitFor('error')).code).toBe('invalid_frame');
    convo.close();
  });

  it('a report file is rotated past REPORTS_MAX_BYTES: the disk holds at most two files per kind, the newest report in the current one', async () => {
    const small = await startTestServer({ REPORTS_MAX_BYTES: '65536' });
    try {
      let lastId = '';
      for (let i = 0; i < 30; i += 1) {
        const client = await WsTestClient.open(small.wsUrl, { Authorization: `Bearer ${small.key}` });
        client.send({ type: 'client_error', session_id: sid('rot'), detail: `failure ${i} ${'d'.repeat(3900)}`, context: { note: 'c'.repeat(1000) } });
        lastId = (await client.waitFor('client_error_ack')).id;
        await client.waitClose();
      }
      const current = statSync(join(small.dataDir, 'client-errors.jsonl')).size;
      const rotated = statSync(join(small.dataDir, 'client-errors.jsonl.1')).size;
      expect(current).toBeLessThanOrEqual(65536);
      expect(rotated).toBeLessThanOrEqual(65536);
      expect(readdirSync(small.dataDir).filter((f) => f.startsWith('client-errors'))).toHaveLength(2);
      expect(readFileSync(join(small.dataDir, 'client-errors.jsonl'), 'utf8')).toContain(lastId);
    } finally {
      await small.stop();
    }
  });

  it('a client_error context over 8192 characters of JSON is refused, nothing stored', async () => {
    const client = await WsTestClient.open(t.wsUrl, { Authorization: `Bearer ${t.key}` });
    client.send({ type: 'client_error', session_id: sid('big'), detail: 'huge', context: { blob: 'x'.repeat(9000) } });
    const error = await client.waitFor('error');
    expect(error.code).toBe('invalid_start_frame');
    expect(error.detail).toContain('8192');
  });
});
