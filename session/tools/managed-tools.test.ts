import { describe, expect, it } from 'vitest';
import type { WebSearch } from '../providers/search.ts';
import { useFakeClock } from '../testing/test-session.ts';
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
  passTime,
  toolNames,
  toolResult,
  useRigs,
  utteranceOf,
  WAIT_MS,
  type RecordedRequest,
} from '../testing/tool-kit.ts';

/**
 * Managed tools run by the server (SPEC "What the service does"): web_search on the search
 * backend, think_deeply on the deep model in the background, cancel_pending_job on a deferred
 * client job. (end_call: session/end-of-call.test.ts.)
 */

const start = useRigs();
useFakeClock();

/** A WebSearch backend in memory: records every query. */
function fakeSearch(): WebSearch & { queries: string[] } {
  const queries: string[] = [];
  return { name: 'fake-search', queries, search: async (query) => (queries.push(query), [{ title: 'Hit', url: 'https://example.org', snippet: 'SNIPPET' }]) };
}

describe('web_search (SearXNG end to end: session/e2e/tools/web-search.test.ts)', () => {
  it('runs on the search backend: the model gets the results, the client is not asked', async () => {
    const search = fakeSearch();
    const rig = await start({ search });
    rig.fake.enqueue({ toolCalls: [{ id: 'call_ws', name: 'web_search', args: { query: 'parley server' } }] }, { text: 'Here is what I found.' });
    const client = await open(rig, { web_search: true, tools: [lookup] });
    const { turnId } = await ask(client, 'search the web for parley');
    expect((await done(client, turnId)).status).toBe('completed');
    expect(toolNames(request(rig, 0))).toEqual(['lookup', 'web_search', 'think_deeply']);
    expect(search.queries).toEqual(['parley server']);
    expect(toolResult(request(rig, 1), 'call_ws')).toMatchObject({ outcome: 'succeeded', content: [{ title: 'Hit', url: 'https://example.org', snippet: 'SNIPPET' }] });
    expect(client.all('tool_call')).toEqual([]);
    finish(client, rig);
  });

  it('not offered without mode.web_search; a client tool named web_search is then run by the client', async () => {
    const search = fakeSearch();
    const rig = await start({ search });
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
    expect(request(rig, 0).tools[0]?.description).toBe('search our intranet');
    expect(search.queries).toEqual([]);
    expect(toolResult(request(rig, 1), 'call_own')).toEqual({ outcome: 'succeeded', verified: true, content: 'INTRANET-HIT' });
    finish(client, rig);
  });
});

describe('think_deeply', () => {
  it('runs on the deep model in the background; the turn is told so; the answer is narrated later', async () => {
    const rig = await start({ tools: { deepModel: 'deep-thinker' } });
    rig.fake.script((body: RecordedRequest) => {
      // Thinking takes a while: the turn that asked is over before the answer is in.
      if (body.model === 'deep-thinker') return { text: 'DEEP-ANSWER-42', latencyMs: 500 };
      if (mentions(body, 'DEEP-ANSWER-42')) return { text: 'The answer is 42.' };
      if (body.messages.some((m) => m.role === 'tool')) return { text: 'Let me think about that.' };
      return { toolCalls: [{ id: 'call_think', name: 'think_deeply', args: { question: 'meaning of life' } }] };
    });
    const client = await open(rig);
    const { turnId } = await ask(client, 'what is the meaning of life');
    expect((await done(client, turnId)).status).toBe('completed');
    expect(utteranceOf(client, turnId)).toBe('Let me think about that.');
    expect(client.all('tool_call')).toEqual([]);

    const bodies = (): RecordedRequest[] => requests(rig);
    await rig.fake.waitRequest((b) => b.model === 'deep-thinker');
    const deep = bodies().find((b) => b.model === 'deep-thinker')!;
    expect(mentions(deep, 'meaning of life')).toBe(true);
    expect(deep.tools).toEqual([]);
    const main = bodies().filter((b) => b.model !== 'deep-thinker');
    expect(main.every((b) => b.model === undefined)).toBe(true);
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
    const rig = await start();
    rig.fake.script((body: RecordedRequest) => {
      if (body.messages.at(-1)?.content?.startsWith('Think carefully')) return { text: 'DEEP-ANSWER-7' };
      if (mentions(body, 'DEEP-ANSWER-7')) return { text: 'It is 7.' };
      if (body.messages.some((m) => m.role === 'tool')) return { text: 'Thinking.' };
      return { toolCalls: [{ id: 'call_think', name: 'think_deeply', args: { question: 'lucky number' } }] };
    });
    const client = await open(rig);
    const { turnId } = await ask(client, 'lucky number?');
    await done(client, turnId);
    await client.waitFor('utterance', (f) => f.text === 'It is 7.', WAIT_MS);
    // No model override: every request, the deep one too, goes to the configured model.
    expect(requests(rig).every((b) => b.model === undefined)).toBe(true);
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
    await passTime(200);
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
    const after = client.frames.length;
    client.send({ type: 'tool_result', id: 'call_j2', content: 'second done', outcome: 'succeeded', verified: true });
    await nextTurn(client, after);
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });

  it('cancels a think_deeply job: offered while it runs, and its answer is never narrated', async () => {
    const rig = await start({ tools: { deepModel: 'deep-thinker' } });
    rig.fake.script((body: RecordedRequest) => {
      if (body.model === 'deep-thinker') return { hang: true };
      const last = body.messages.at(-1);
      if (last?.role === 'user' && last.content === 'think about it') return { toolCalls: [{ id: 'call_think', name: 'think_deeply', args: { question: 'q' } }] };
      if (last?.role === 'user' && last.content === 'forget it') return { toolCalls: [{ id: 'call_cancel', name: 'cancel_pending_job', args: {} }] };
      return { text: 'ok' };
    });
    const client = await open(rig);
    const first = await ask(client, 'think about it');
    await done(client, first.turnId);
    await rig.fake.waitRequest((b) => b.model === 'deep-thinker');
    const second = await ask(client, 'forget it');
    await done(client, second.turnId);
    const asked = requests(rig).filter((b) => b.model !== 'deep-thinker');
    const cancelRound = asked.find((b) => b.messages.at(-1)?.content === 'forget it')!;
    expect(toolNames(cancelRound)).toContain('cancel_pending_job');
    const told = toolResult(asked.at(-1)!, 'call_cancel');
    expect(told).toMatchObject({ outcome: 'succeeded', verified: true });
    await passTime(300);
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
