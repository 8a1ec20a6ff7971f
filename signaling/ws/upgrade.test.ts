import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAlive, openText } from '../testing/conversation.ts';
import { rawExchange, upgradeRequest } from '../testing/raw-http.ts';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
import { WsTestClient } from '../testing/ws-test-client.ts';

describe('upgrade requests no URL parser accepts', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.stop();
  });

  it.each(['//x:99999/ws', '//ws', 'http://[::1', '/ws/../../%zz', '*', '/%E0%A4%A/ws'])(
    'target %s is answered with a JSON refusal and the live session goes on',
    async (target) => {
      const live = await openText(t, { greeting: false });
      const answer = await rawExchange(t.server.port, upgradeRequest(target));
      expect(answer).toMatch(/^HTTP\/1\.1 40[04] /);
      expect(answer).toContain('"retryable":false');
      await expectAlive(live.client);
      live.client.close();
      await live.client.waitClose();
    },
  );

  it('a query string after /ws still reaches the conversation endpoint', async () => {
    const answer = await rawExchange(t.server.port, upgradeRequest('/ws?v=1'), 500);
    expect(answer).toMatch(/^HTTP\/1\.1 101 /);
  });

  it('a peer that resets the socket while it is refused does not take the process down', async () => {
    for (let i = 0; i < 20; i += 1) void rawExchange(t.server.port, upgradeRequest('/nope'), 0);
    const live = await openText(t, { greeting: false });
    await expectAlive(live.client);
    live.client.close();
  });
});

describe('ALLOWED_ORIGINS', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ ALLOWED_ORIGINS: 'https://app.example.org, http://localhost:3000/' });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('a browser upgrade from another origin is refused with 403 forbidden_origin', async () => {
    const answer = await rawExchange(t.server.port, upgradeRequest('/ws', { Origin: 'https://evil.example' }));
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer).toContain('"code":"forbidden_origin"');
  });

  it('listed origins (any case, a trailing slash in the list ignored) and clients without an Origin are accepted', async () => {
    const cases: Record<string, string>[] = [{ origin: 'https://APP.example.org' }, { origin: 'http://localhost:3000' }, {}];
    for (const headers of cases) {
      const client = await WsTestClient.open(t.wsUrl, headers);
      client.close();
      await client.waitClose();
    }
  });
});

describe('HTTP requests no URL parser accepts', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.stop();
  });

  it.each([
    ['http://[::1', 400, 'invalid_request'],
    ['//x:99999/healthz', 404, 'not_found'],
  ])('target %s → %i %s (JSON), and the server answers on', async (target, status, code) => {
    const answer = await rawExchange(t.server.port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(answer).toContain(`"code":"${code}"`);
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
  });
});
