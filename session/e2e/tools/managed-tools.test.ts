import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { WsTestClient } from '../../../signaling/testing/ws-test-client.ts';
import { sid } from '../../../signaling/testing/conversation.ts';
import { listenOnLoopback } from '../../testing/fake-http.ts';
import {
  ask,
  done,
  finish,
  lookup,
  mentions,
  nextTurn,
  open,
  openWithToolCall,
  pos,
  refusalOf,
  report,
  request,
  requests,
  sleep,
  toolNames,
  toolResult,
  until,
  useRigs,
  utteranceOf,
  WAIT_MS,
  type WireRequest,
} from './tool-test-kit.ts';

/**
 * Managed tools run by the server (SPEC "What the service does"): web_search through a
 * SearXNG backend, think_deeply on the deep model in the background, cancel_pending_job on a
 * deferred client job. (end_call: end-call.test.ts.)
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

  it('not offered without mode.web_search; a client tool named web_search is then run by the client', async () => {
    const search = await startFakeSearch();
    const rig = await start({ SEARCH_URL: search.url });
    const { client, turnId, calls: [call] } = await openWithToolCall(rig, {
      calls: [{ id: 'call_own', name: 'web_search', args: { query: 'intranet' } }],
      question: 'search the intranet',
      answer: 'Found it on the intranet.',
      tools: [{ name: 'web_search', description: 'search our intranet' }],
    });
    expect(call?.name).toBe('web_search');
    client.send({ type: 'tool_result', id: 'call_own', content: 'INTRANET-HIT', outcome: 'succeeded', verified: true });
    await done(client, turnId);
    expect(toolNames(request(rig, 0))).toEqual(['web_search', 'think_deeply']);
    expect(request(rig, 0).tools?.[0]?.function.description).toBe('search our intranet');
    expect(search.queries).toEqual([]);
    expect(toolResult(request(rig, 1), 'call_own')).toEqual({ outcome: 'succeeded', verified: true, content: 'INTRANET-HIT' });
    finish(client, rig);
  });
});

describe('think_deeply', () => {
  it('runs on the deep model in the background; the turn is told so; the answer is narrated later', async () => {
    const rig = await start({ LLM_DEEP_MODEL: 'deep-thinker' });
    rig.fake.script((body: WireRequest) => {
      if (body.model === 'deep-thinker') return { text: 'DEEP-ANSWER-42' };
      if (mentions(body, 'DEEP-ANSWER-42')) return { text: 'The answer is 42.' };
      if (body.messages.some((m) => m.role === 'tool')) return { text: 'Let me think about that.' };
      return { toolCalls: [{ id: 'call_think', name: 'think_deeply', args: { question: 'meaning of life' } }] };
    });
    const client = await open(rig);
    const { turnId } = await ask(client, 'what is the meaning of life');
    expect((await done(client, turnId)).status).toBe('completed');
    expect(utteranceOf(client, turnId)).toBe('Let me think about that.');
    expect(client.all('tool_call')).toEqual([]);

    const bodies = (): WireRequest[] => requests(rig);
    await until(() => bodies().some((b) => b.model === 'deep-thinker'), 'the deep model request');
    const deep = bodies().find((b) => b.model === 'deep-thinker')!;
    expect(mentions(deep, 'meaning of life')).toBe(true);
    expect(deep.tools).toBeUndefined();
    const main = bodies().filter((b) => b.model !== 'deep-thinker');
    expect(main.every((b) => b.model === 'gpt-4o-mini')).toBe(true);
    const told = toolResult(main[1]!, 'call_think');
    expect(told?.outcome).toBe('unknown');
    expect(JSON.stringify(told?.content)).toContain('background');

    // The deeper answer arrives as its own turn.
    const narrationTurn = await client.waitFor('utterance', (f) => f.text === 'The answer is 42.', WAIT_MS);
    expect(narrationTurn.turn_id).not.toBe(turnId);
    await done(client, narrationTurn.turn_id);
    const narrationStart = client.all('turn').find((f) => f.turn_id === narrationTurn.turn_id);
    expect(pos(client, narrationStart)).toBeGreaterThan(pos(client, client.all('done').find((f) => f.turn_id === turnId)));
    finish(client, rig);
  });

  it('without LLM_DEEP_MODEL the configured model thinks', async () => {
    const rig = await start({ LLM_MODEL: 'main-model' });
    rig.fake.script((body: WireRequest) => {
      if (body.messages.at(-1)?.content?.startsWith('Think carefully')) return { text: 'DEEP-ANSWER-7' };
      if (mentions(body, 'DEEP-ANSWER-7')) return { text: 'It is 7.' };
      if (body.messages.some((m) => m.role === 'tool')) return { text: 'Thinking.' };
      return { toolCalls: [{ id: 'call_think', name: 'think_deeply', args: { question: 'lucky number' } }] };
    });
    const client = await open(rig);
    const { turnId } = await ask(client, 'lucky number?');
    await done(client, turnId);
    await client.waitFor('utterance', (f) => f.text === 'It is 7.', WAIT_MS);
    expect(requests(rig).every((b) => b.model === 'main-model')).toBe(true);
    finish(client, rig);
  });
});

describe('cancel_pending_job', () => {
  it('offered only while a job runs; cancelling a deferred client job sends the host tool_cancel for its call', async () => {
    const rig = await start();
    const { client, turnId: firstTurnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_job', name: 'report', args: {} }],
      question: 'build the report',
      answer: 'Report started.',
      tools: [report],
    });
    expect(toolNames(request(rig, 0))).not.toContain('cancel_pending_job');
    client.send({ type: 'tool_deferred', id: 'call_job', handle: 'report-x', status_label: 'Report' });
    const ack = await client.waitFor('tool_deferred_ack', (f) => f.accepted, WAIT_MS);
    await done(client, firstTurnId);

    rig.fake.enqueue({ toolCalls: [{ id: 'call_cancel', name: 'cancel_pending_job', args: {} }] }, { text: 'I cancelled the report.' });
    const second = await ask(client, 'cancel the report');
    const cancel = await client.waitFor('tool_cancel', (f) => f.id === 'call_job', WAIT_MS);
    expect(cancel).toEqual({ type: 'tool_cancel', id: 'call_job' });
    await done(client, second.turnId);
    expect(toolNames(request(rig, 2))).toContain('cancel_pending_job');
    expect(toolResult(request(rig, 3), 'call_cancel')).toMatchObject({ outcome: 'succeeded', verified: true });
    expect(JSON.stringify(toolResult(request(rig, 3), 'call_cancel')?.content)).toContain(ack.job_id as string);

    // The job is over: the host's late result is refused and the tool is no longer offered.
    expect(await refusalOf(client, { type: 'tool_result', id: 'call_job', content: 'late', outcome: 'succeeded' })).toMatchObject({ code: 'unknown_tool_call' });
    await sleep(200);
    const last = await ask(client, 'anything else?');
    await done(client, last.turnId);
    expect(toolNames(requests(rig).at(-1)!)).not.toContain('cancel_pending_job');
    finish(client, rig);
  });

  it('by job_id: only that job is cancelled', async () => {
    const rig = await start();
    const { client, turnId: firstTurnId } = await openWithToolCall(rig, {
      calls: [
        { id: 'call_j1', name: 'report', args: { n: 1 } },
        { id: 'call_j2', name: 'report', args: { n: 2 } },
      ],
      question: 'two reports',
      answer: 'Two reports started.',
      tools: [report],
    });
    client.send({ type: 'tool_deferred', id: 'call_j1', handle: 'r1' });
    client.send({ type: 'tool_deferred', id: 'call_j2', handle: 'r2' });
    const ack1 = await client.waitFor('tool_deferred_ack', (f) => f.id === 'call_j1' && f.accepted, WAIT_MS);
    await done(client, firstTurnId);

    rig.fake.enqueue({ toolCalls: [{ id: 'call_cancel', name: 'cancel_pending_job', args: { job_id: ack1.job_id } }] }, { text: 'Cancelled the first.' });
    const second = await ask(client, 'cancel the first one');
    await done(client, second.turnId);
    expect(client.all('tool_cancel').map((f) => f.id)).toEqual(['call_j1']);
    // The other job still takes its result.
    client.send({ type: 'tool_result', id: 'call_j2', content: 'second done', outcome: 'succeeded', verified: true });
    await nextTurn(client, client.frames.length);
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });

  it('cancels a think_deeply job: offered while it runs, and its answer is never narrated', async () => {
    const rig = await start({ LLM_DEEP_MODEL: 'deep-thinker' });
    rig.fake.script((body: WireRequest) => {
      if (body.model === 'deep-thinker') return { hang: true };
      const last = body.messages.at(-1);
      if (last?.role === 'user' && last.content === 'think about it') return { toolCalls: [{ id: 'call_think', name: 'think_deeply', args: { question: 'q' } }] };
      if (last?.role === 'user' && last.content === 'forget it') return { toolCalls: [{ id: 'call_cancel', name: 'cancel_pending_job', args: {} }] };
      return { text: 'ok' };
    });
    const client = await open(rig);
    const first = await ask(client, 'think about it');
    await done(client, first.turnId);
    await until(() => requests(rig).some((b) => b.model === 'deep-thinker'), 'the deep request');
    const second = await ask(client, 'forget it');
    await done(client, second.turnId);
    const asked = requests(rig).filter((b) => b.model !== 'deep-thinker');
    const cancelRound = asked.find((b) => b.messages.at(-1)?.content === 'forget it')!;
    expect(toolNames(cancelRound)).toContain('cancel_pending_job');
    const told = toolResult(asked.at(-1)!, 'call_cancel');
    expect(told).toMatchObject({ outcome: 'succeeded', verified: true });
    await sleep(300);
    expect(client.all('turn')).toHaveLength(2);
    expect(client.all('tool_cancel')).toEqual([]);
    finish(client, rig);
  });

  it('cancel_pending_job with no job → the model is told failed', async () => {
    const rig = await start();
    rig.fake.enqueue({ toolCalls: [{ id: 'call_cancel', name: 'cancel_pending_job', args: { job_id: 'job_nope' } }] }, { text: 'Nothing to cancel.' });
    const client = await open(rig, { tools: [report] });
    const { turnId } = await ask(client, 'cancel it');
    await done(client, turnId);
    expect(toolResult(request(rig, 1), 'call_cancel')).toMatchObject({ outcome: 'failed', verified: false });
    expect(client.all('tool_cancel')).toEqual([]);
    finish(client, rig);
  });
});
