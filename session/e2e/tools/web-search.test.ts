import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { WsTestClient } from '../../../signaling/testing/ws-test-client.ts';
import { sid } from '../../../signaling/testing/conversation.ts';
import { listenOnLoopback } from '../../testing/fake-http.ts';
import { ask, done, finish, lookup, open, request, toolNames, toolResult, useRigs, utteranceOf, WAIT_MS } from './tool-test-kit.ts';

/**
 * The managed web_search tool end to end: SEARCH_URL wiring, the SearXNG adapter against a tiny
 * SearXNG on a real port, and the start-frame checks. Its behaviour inside a turn, and the other
 * managed tools: session/tools/managed-tools.test.ts.
 */

const start = useRigs();

/** A tiny SearXNG: GET /search?q=..&format=json → {results}. Records every query string. */
interface FakeSearch {
  url: string;
  queries: URLSearchParams[];
  status: number;
  close(): Promise<void>;
}

const searches: FakeSearch[] = [];
afterEach(async () => {
  for (const s of searches.splice(0)) await s.close();
});

async function startFakeSearch(): Promise<FakeSearch> {
  const queries: URLSearchParams[] = [];
  const state: FakeSearch = { url: '', queries, status: 200, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/search') {
      res.writeHead(404).end();
      return;
    }
    queries.push(url.searchParams);
    if (state.status !== 200) {
      res.writeHead(state.status, { 'content-type': 'application/json' }).end('{"error":"down"}');
      return;
    }
    const q = url.searchParams.get('q') ?? '';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        query: q,
        results: [
          { title: `About ${q}`, url: 'https://example.org/a', content: 'SEARCH-SNIPPET-A', engine: 'x' },
          { title: 'Second hit', url: 'https://example.org/b', content: 'SEARCH-SNIPPET-B' },
        ],
      }),
    );
  });
  state.url = await listenOnLoopback(server);
  state.close = () => new Promise((resolve) => server.close(() => resolve()));
  searches.push(state);
  return state;
}

describe('web_search', () => {
  it('mode.web_search without SEARCH_URL → error web_search_unavailable at start', async () => {
    const rig = await start();
    const client = await WsTestClient.open(rig.t.wsUrl);
    client.send({ type: 'start', session_id: sid(), api_key: rig.t.key, mode: { kind: 'service', modality: 'text', greeting: false, web_search: true } });
    const error = await client.waitFor('error', () => true, WAIT_MS);
    expect(error).toMatchObject({ code: 'web_search_unavailable', retryable: false, detail: expect.any(String) });
    await client.waitClose(WAIT_MS);
    expect(client.all('ready')).toEqual([]);
    finish(client, rig);
  });

  it("with SEARCH_URL, the model's web_search call gets the backend's results in its tool message", async () => {
    const search = await startFakeSearch();
    const rig = await start({ SEARCH_URL: search.url });
    rig.fake.enqueue({ toolCalls: [{ id: 'call_ws', name: 'web_search', args: { query: 'parley server' } }] }, { text: 'Here is what I found.' });
    const client = await open(rig, { web_search: true, tools: [lookup] });
    const { turnId } = await ask(client, 'search the web for parley');
    expect((await done(client, turnId)).status).toBe('completed');
    expect(toolNames(request(rig, 0))).toEqual(['lookup', 'web_search', 'think_deeply']);
    expect(search.queries).toHaveLength(1);
    expect(search.queries[0]?.get('q')).toBe('parley server');
    expect(search.queries[0]?.get('format')).toBe('json');
    const told = toolResult(request(rig, 1), 'call_ws');
    expect(told?.outcome).toBe('succeeded');
    expect(told?.content).toEqual([
      { title: 'About parley server', url: 'https://example.org/a', snippet: 'SEARCH-SNIPPET-A' },
      { title: 'Second hit', url: 'https://example.org/b', snippet: 'SEARCH-SNIPPET-B' },
    ]);
    // Managed: the client is not asked to run it.
    expect(client.all('tool_call')).toEqual([]);
    expect(utteranceOf(client, turnId)).toBe('Here is what I found.');
    finish(client, rig);
  });

  it('a failing search backend → the model is told failed; the turn goes on', async () => {
    const search = await startFakeSearch();
    search.status = 503;
    const rig = await start({ SEARCH_URL: search.url });
    rig.fake.enqueue({ toolCalls: [{ id: 'call_ws', name: 'web_search', args: { query: 'news' } }] }, { text: 'Search is down.' });
    const client = await open(rig, { web_search: true });
    const { turnId } = await ask(client, 'any news?');
    expect((await done(client, turnId)).status).toBe('completed');
    expect(toolResult(request(rig, 1), 'call_ws')).toMatchObject({ outcome: 'failed', verified: false });
    finish(client, rig);
  });

  it('web_search is reserved while mode.web_search is on: a client tool of that name → invalid_tools', async () => {
    const search = await startFakeSearch();
    const rig = await start({ SEARCH_URL: search.url });
    const client = await WsTestClient.open(rig.t.wsUrl);
    client.send({ type: 'start', session_id: sid(), api_key: rig.t.key, mode: { kind: 'service', modality: 'text', web_search: true, tools: [{ name: 'web_search' }] } });
    expect(await client.waitFor('error', () => true, WAIT_MS)).toMatchObject({ code: 'invalid_tools', retryable: false });
    await client.waitClose(WAIT_MS);
    finish(client, rig);
  });

});
