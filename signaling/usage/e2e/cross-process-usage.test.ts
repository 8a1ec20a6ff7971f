import { describe, expect, it } from 'vitest';
import { eventually, expectFatal, say, sid, textStart } from '../../testing/conversation.ts';
import type { TestServer } from '../../testing/test-server.ts';
import { twoProcessesForThisFile } from '../../testing/two-processes-per-file.ts';
import { startSession, WsTestClient } from '../../testing/ws-test-client.ts';

/**
 * Accounts and usage across two server processes of one deployment (a real Redis and a real
 * PostgreSQL): the concurrent-session limit and the rate windows count every process's sessions,
 * one ledger takes every process's turns, and a top-up counts at once on every process.
 */
const d = twoProcessesForThisFile({ MAX_SESSIONS_PER_ACCOUNT: '2', SESSION_STARTS_PER_MINUTE: '5' });

const keyOf = async (account: string): Promise<string> => (await d.a.server.context.stores.keys.create(account)).key;
const startOn = async (on: TestServer, key: string) => {
  const s = await startSession(on.wsUrl, { ...textStart(sid('xp'), { greeting: false }), api_key: key });
  d.track(s.client);
  return s.client;
};
async function refused(on: TestServer, key: string, code: string, retryable: boolean, closeCode: number) {
  const client = d.track(await WsTestClient.open(on.wsUrl));
  client.send({ type: 'start', ...textStart(sid('xp'), { greeting: false }), api_key: key });
  return expectFatal(client, code, retryable, closeCode);
}

describe.skipIf(!d.enabled)('accounts and usage across two processes', () => {
  it('MAX_SESSIONS_PER_ACCOUNT counts the sessions of both processes; a session ending on one frees a place on the other', async () => {
    const key = await keyOf('conc');
    const onA = await startOn(d.a, key);
    await startOn(d.b, key);
    expect((await refused(d.a, key, 'rate_limited', true, 4429)).limit).toBe('max_sessions');
    expect((await refused(d.b, key, 'rate_limited', true, 4429)).limit).toBe('max_sessions');
    onA.ws.close(1000);
    await eventually(async () => (await d.b.server.context.stores.live.countForAccount('conc')) === 1, 5000, 'the lease on A to go');
    const third = await startOn(d.b, key);
    expect(third.all('error')).toEqual([]);
  });

  it('SESSION_STARTS_PER_MINUTE is one window for the account on every process', async () => {
    const key = await keyOf('starts');
    for (let i = 0; i < 5; i += 1) (await startOn(i % 2 === 0 ? d.a : d.b, key)).ws.close(1000);
    const error = await refused(d.b, key, 'rate_limited', true, 4429);
    expect(error.limit).toBe('session_starts_per_minute');
    expect(error.retry_after_ms).toBeGreaterThan(0);
    expect(error.retry_after_ms).toBeLessThanOrEqual(60_000);
  });

  it('one ledger: turns on A are in the usage B reports and off the credit; a top-up through B counts on A at once', async () => {
    const key = await keyOf('shared');
    await d.b.server.context.stores.accounts.setCredit('shared', 1000);
    const client = await startOn(d.a, key);
    d.fake.enqueue({ text: 'Hello there.' });
    await say(client, 'hello');
    client.ws.close(1000);
    // The session's own close adds its last usage: the ledger is flushed once A has let it go.
    await d.a.whenSessions(0);
    await d.a.server.context.usage.writer.flush();
    const report = await (await fetch(`${d.b.url}/api/v1/usage`, { headers: { authorization: `Bearer ${key}` } })).json();
    expect(report).toMatchObject({ account: 'shared', sessions: [{ turns: 1 }] });
    expect(report.totals.units).toBeGreaterThan(0);
    expect(await d.b.server.context.stores.accounts.credit('shared')).toBeCloseTo(1000 - report.totals.units, 6);

    await d.b.server.context.stores.accounts.setCredit('shared', 0);
    expect((await refused(d.a, key, 'credit_exhausted', false, 4402)).code).toBe('credit_exhausted');
    await d.b.server.context.stores.accounts.addCredit('shared', 50);
    expect((await startOn(d.a, key)).all('error')).toEqual([]);
  });
});
