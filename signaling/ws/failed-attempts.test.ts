import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { expectAlive, expectFatal, sid, textStart, WAIT_MS } from '../testing/conversation.ts';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
import { startSession, WsTestClient } from '../testing/ws-test-client.ts';

/** A logger that keeps every line, to check what a failure logs (and what it never does). */
function capturedLog(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

let t: TestServer | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const badKey = (n: number): string => `ck_${String(n).padStart(64, '0')}`;

describe('failed authentications and resume attempts are counted, limited and logged', () => {
  it('per connection: the third refused resume on one socket closes it with too_many_attempts (4429)', async () => {
    t = await startTestServer({ RESUME_FAILURES_PER_CONNECTION: '3' });
    const client = await WsTestClient.open(t.wsUrl);
    for (let i = 0; i < 2; i += 1) {
      const after = client.frames.length;
      client.send({ type: 'start', ...textStart(sid()), api_key: t.key, resume_token: `rt_guess${i}` });
      expect((await client.waitFor('error', () => true, WAIT_MS, after)).code).toBe('resume_failed');
    }
    client.send({ type: 'start', ...textStart(sid()), api_key: t.key, resume_token: 'rt_guess2' });
    const closed = await client.waitClose(WAIT_MS);
    expect(closed.code).toBe(4429);
    expect(client.all('error').map((e) => e.code)).toEqual(['resume_failed', 'resume_failed', 'too_many_attempts']);
    expect(client.all('error').at(-1)!.retryable).toBe(true);
    client.assertProtocol();
  });

  it('per address: past AUTH_FAILURES_PER_ADDRESS every attempt is refused (socket, handshake, HTTP) until the window passes; lines name a fingerprint, never the key', async () => {
    const { log, lines } = capturedLog();
    t = await startTestServer({ AUTH_FAILURES_PER_ADDRESS: '4', AUTH_FAILURE_WINDOW_S: '2' }, { log });
    const server = t;
    // A socket opened before the limit is reached: its start is checked when it comes.
    const right = await WsTestClient.open(server.wsUrl);
    for (let i = 0; i < 5; i += 1) {
      const guess = await WsTestClient.open(server.wsUrl);
      guess.send({ type: 'start', ...textStart(sid()), api_key: badKey(i) });
      await expectFatal(guess, 'unauthorized', false, 4401);
    }

    // Now even the right key is refused from this address, on every way in.
    right.send({ type: 'start', ...textStart(sid()), api_key: server.key });
    const refused = await expectFatal(right, 'too_many_attempts', true, 4429);
    expect(refused.retry_after_ms).toBeGreaterThan(0);
    right.assertProtocol();
    await expect(WsTestClient.open(server.wsUrl)).rejects.toThrow(/429/);
    await expect(WsTestClient.open(server.wsUrl, { authorization: `Bearer ${server.key}` })).rejects.toThrow(/429/);
    const http = await fetch(`${server.url}/api/v1/session-keys`, {
      method: 'POST', headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ session_id: 's1' }),
    });
    expect(http.status).toBe(429);
    expect(Number(http.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await http.json()).toMatchObject({ code: 'too_many_attempts', retryable: true });

    // The window passes: the right key works again.
    await new Promise((r) => setTimeout(r, 2200));
    const { client } = await startSession(server.wsUrl, { ...textStart(sid()), api_key: server.key });
    await expectAlive(client);
    client.close();

    const failures = lines.filter((l) => l.includes('failed authentication'));
    expect(failures.length).toBeGreaterThanOrEqual(5);
    expect(failures[0]).toContain('"address":"127.0.0.1"');
    expect(failures[0]).toMatch(/"tried":"ck_…#[0-9a-f]{8}"/);
    for (let i = 0; i < 5; i += 1) expect(lines.join('\n')).not.toContain(badKey(i));
    expect(lines.join('\n')).not.toContain(server.key);
  });

  it('resume-token guesses count against the address too, and are logged without the token', async () => {
    const { log, lines } = capturedLog();
    t = await startTestServer({ AUTH_FAILURES_PER_ADDRESS: '3', RESUME_FAILURES_PER_CONNECTION: '100' }, { log });
    const client = await WsTestClient.open(t.wsUrl);
    for (let i = 0; i < 4; i += 1) {
      const after = client.frames.length;
      client.send({ type: 'start', ...textStart(sid()), api_key: t.key, resume_token: `rt_secretguess${i}` });
      expect((await client.waitFor('error', () => true, WAIT_MS, after)).code).toBe('resume_failed');
    }
    client.send({ type: 'start', ...textStart(sid()), api_key: t.key });
    expect((await client.waitFor('error', (e) => e.code !== 'resume_failed')).code).toBe('too_many_attempts');
    expect(lines.filter((l) => l.includes('failed resume attempt'))).toHaveLength(4);
    expect(lines.join('\n')).not.toContain('rt_secretguess');
  });
});
