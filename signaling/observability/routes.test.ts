import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer } from '../../session/testing/fake-openai-server.ts';
import { PromScrape } from '../testing/prom-scrape.ts';
import { startTestServer, type TestServer } from '../testing/test-server.ts';

/** /metrics access (loopback or METRICS_TOKEN) and /readyz dependency checks, on the real server. */

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});
async function server(env: Record<string, string> = {}): Promise<TestServer> {
  const t = await startTestServer(env);
  servers.push(t);
  return t;
}

/** This machine's first non-loopback IPv4 address, if it has one. */
const lanAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i?.family === 'IPv4' && !i.internal)?.address;

describe('GET /metrics', () => {
  it('serves the Prometheus text format to a loopback client: our metrics and prom-client\'s defaults', async () => {
    const t = await server();
    const response = await fetch(`${t.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const scrape = new PromScrape(await response.text());
    for (const name of ['parley_sessions_active', 'parley_turn_stage_seconds', 'parley_downlink_lateness_seconds', 'process_cpu_seconds_total', 'nodejs_eventloop_lag_seconds', 'nodejs_gc_duration_seconds']) {
      expect(scrape.types.has(name), name).toBe(true);
    }
  });

  it('refuses a request a local reverse proxy forwarded (403 forbidden), unless TRUST_PROXY says where it came from', async () => {
    const t = await server();
    const forwarded = await fetch(`${t.url}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(forwarded.status).toBe(403);
    expect(await forwarded.json()).toMatchObject({ code: 'forbidden', retryable: false });
    const trusting = await server({ TRUST_PROXY: '1' });
    expect((await fetch(`${trusting.url}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(403);
    expect((await fetch(`${trusting.url}/metrics`, { headers: { 'x-forwarded-for': '127.0.0.1' } })).status).toBe(200);
  });

  it.skipIf(!lanAddress)('refuses a client on another address (403) unless METRICS_TOKEN is set and sent', async () => {
    const open = await server({ HOST: '0.0.0.0' });
    const response = await fetch(`http://${lanAddress}:${open.server.port}/metrics`);
    expect(response.status).toBe(403);
    const guarded = await server({ HOST: '0.0.0.0', METRICS_TOKEN: 'metrics-token-0123456789' });
    const remote = `http://${lanAddress}:${guarded.server.port}/metrics`;
    expect((await fetch(remote, { headers: { authorization: 'Bearer metrics-token-0123456789' } })).status).toBe(200);
  });

  it('with METRICS_TOKEN set, asks everyone for it, loopback included (401 unauthorized)', async () => {
    const t = await server({ METRICS_TOKEN: 'metrics-token-0123456789' });
    const missing = await fetch(`${t.url}/metrics`);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ code: 'unauthorized', retryable: false });
    expect((await fetch(`${t.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-wrong-456789' } })).status).toBe(401);
    expect((await fetch(`${t.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456789' } })).status).toBe(200);
  });
});

describe('GET /readyz', () => {
  it('is ready with nothing to check, and /healthz stays the plain liveness answer', async () => {
    const t = await server();
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: {} });
    expect(await (await fetch(`${t.url}/healthz`)).json()).toMatchObject({ status: 'ok', sessions: 0 });
  });

  it('answers 503 naming an unreachable provider, and 200 once it is back', async () => {
    const llm = await startFakeOpenAiServer();
    const { port } = new URL(llm.url);
    await llm.close();
    const t = await server({ LLM_PROVIDER: 'openai', LLM_BASE_URL: `http://127.0.0.1:${port}/v1` });
    const down = await fetch(`${t.url}/readyz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ status: 'unready', checks: { llm: 'unreachable' }, unreachable: ['llm'], errors: { llm: expect.stringContaining('ECONNREFUSED') } });

    const live = await startFakeOpenAiServer();
    const up = await server({ LLM_PROVIDER: 'openai', LLM_BASE_URL: live.url, TTS_PROVIDER: 'openai', TTS_BASE_URL: live.url });
    const ok = await fetch(`${up.url}/readyz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'ready', checks: { llm: 'ok', tts: 'ok' } });
    await live.close();
  });
});
