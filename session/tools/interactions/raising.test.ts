import { describe, expect, it } from 'vitest';
import { useFakeClock } from '../../testing/test-session.ts';
import { done, finish, mentions, requests, passTime, WAIT_MS } from '../../testing/tool-kit.ts';
import { barrier, busyFloor, deferredJob, narration, narrationRequests, narrationTurn, openSession, raise, statesOf, useInteractionRigs } from '../../testing/interaction-kit.ts';

/**
 * Raising an interaction (SPEC "Interaction (inside tool_partial_result)", Resolver fields):
 * validation that refuses the whole interaction with error invalid_interaction and changes
 * nothing, ids (host-chosen and single-use, or `<call_id>#i<n>`), and `reply` being ignored.
 */

const start = useInteractionRigs();
useFakeClock();

describe('interaction ids', () => {
  it('an omitted id is derived as <call_id>#i<n> and reported in interaction_ids', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    raise(client, 'call_job', { prompt: 'First?' });
    const first = await narration(client, 'started', 'call_job#i1');
    await done(client, await narrationTurn(client, first));
    raise(client, 'call_job', { prompt: 'Second?' });
    await narration(client, 'superseded', 'call_job#i1');
    const second = await narration(client, 'started', 'call_job#i2');
    expect(second.interaction_ids).toEqual(['call_job#i2']);
    await done(client, await narrationTurn(client, second));
    finish(client, rig);
  });

  it('a host id is used as given; a reused id is invalid_interaction (single-use per session) and changes nothing', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    raise(client, 'call_job', { id: 'host-1', prompt: 'Question?' });
    await done(client, await narrationTurn(client, await narration(client, 'started', 'host-1')));
    const after = client.frames.length;
    raise(client, 'call_job', { id: 'host-1', prompt: 'Asked again?' }, { content: 'REUSED-PARTIAL' });
    const error = await client.waitFor('error', () => true, WAIT_MS, after);
    expect(error).toMatchObject({ code: 'invalid_interaction', retryable: false });
    await barrier(client);
    expect(statesOf(client, 'host-1')).toEqual(['started']);
    expect(client.all('tool_job_narration')).toHaveLength(1);
    expect(requests(rig).some((b) => mentions(b, 'REUSED-PARTIAL') || mentions(b, 'Asked again?'))).toBe(false);
    finish(client, rig);
  });
});

describe('invalid interactions → error invalid_interaction, nothing changes', () => {
  const cases: { name: string; interaction: Record<string, unknown> }[] = [
    { name: 'option_args keys not a subset of the options', interaction: { prompt: 'Size?', options: ['small', 'large'], resolver: { tool: 'confirm', option_args: { small: { size: 's' }, huge: { size: 'xl' } } } } },
    { name: 'option_args on a free-text ask (no options)', interaction: { prompt: 'Name?', resolver: { tool: 'confirm', answer_arg: 'name', option_args: { x: {} } } } },
    { name: 'a binding over 2 KiB as compact JSON', interaction: { prompt: 'Size?', options: ['small'], resolver: { tool: 'confirm', args: { pad: 'p'.repeat(2048) } } } },
    { name: 'a free-text binding without answer_arg', interaction: { prompt: 'Name?', resolver: { tool: 'confirm', args: {} } } },
  ];

  it.each(cases)('$name', async ({ interaction }) => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    const after = client.frames.length;
    raise(client, 'call_job', { id: 'bad-1', ...interaction }, { content: 'INVALID-PARTIAL' });
    const error = await client.waitFor('error', () => true, WAIT_MS, after);
    expect(error).toMatchObject({ code: 'invalid_interaction', retryable: false });
    await barrier(client);
    await passTime(50);
    expect(client.all('tool_job_narration')).toEqual([]);
    expect(client.all('turn')).toHaveLength(1);
    // Nothing changed: the id is still free and the partial was not recorded.
    raise(client, 'call_job', { id: 'bad-1', prompt: 'A valid ask?' });
    const started = await narration(client, 'started', 'bad-1');
    await done(client, await narrationTurn(client, started));
    expect(mentions(narrationRequests(rig)[0]!, 'INVALID-PARTIAL')).toBe(false);
    finish(client, rig);
  });

  it('a binding of exactly 2 KiB is accepted', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    const base = JSON.stringify({ tool: 'confirm', args: { pad: '' } }).length;
    raise(client, 'call_job', { id: 'edge', prompt: 'Size?', options: ['small'], resolver: { tool: 'confirm', args: { pad: 'p'.repeat(2048 - base) } } });
    await narration(client, 'started', 'edge');
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });

  it('schema faults (prompt over 500, 9 options, an option over 64, an extra resolver field) are refused by the frame parser with invalid_interaction and change nothing', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    const bad = [
      { prompt: 'p'.repeat(501) },
      { prompt: 'Pick', options: Array.from({ length: 9 }, (_, i) => `o${i}`) },
      { prompt: 'Pick', options: ['x'.repeat(65)] },
      { prompt: 'Pick', options: ['a'], resolver: { tool: 'confirm', extra: 1 } },
      { id: 'i'.repeat(65), prompt: 'Pick' },
    ];
    for (const interaction of bad) raise(client, 'call_job', interaction);
    await barrier(client);
    expect(client.all('error').filter((e) => e.code === 'invalid_interaction')).toHaveLength(bad.length);
    expect(client.all('tool_job_narration')).toEqual([]);
    finish(client, rig);
  });

  it('an interaction on an unknown or closed call → error unknown_tool_call', async () => {
    const rig = await start();
    const client = await openSession(rig);
    const after = client.frames.length;
    raise(client, 'call_nobody', { prompt: 'Question?' });
    expect(await client.waitFor('error', () => true, WAIT_MS, after)).toMatchObject({ code: 'unknown_tool_call' });
    expect(client.all('tool_job_narration')).toEqual([]);
    finish(client, rig);
  });
});

describe('reply and context', () => {
  it('reply is ignored when an interaction is given: only the narration turn starts', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    const turnsBefore = client.all('turn').length;
    raise(client, 'call_job', { id: 'ask-reply', prompt: 'Question?' }, { reply: true, content: 'PARTIAL-WITH-ASK' });
    await done(client, await narrationTurn(client, await narration(client, 'started', 'ask-reply')));
    await passTime(150);
    expect(client.all('turn')).toHaveLength(turnsBefore + 1);
    expect(requests(rig).some((b) => mentions(b, 'A tool just reported a partial result'))).toBe(false);
    // The partial itself and the question entered the context.
    const body = narrationRequests(rig)[0]!;
    expect(mentions(body, 'PARTIAL-WITH-ASK')).toBe(true);
    expect(mentions(body, 'needs a decision from the user, interaction ask-reply')).toBe(true);
    finish(client, rig);
  });

  it('an interaction counts as one of the call\'s 8 partials', async () => {
    const rig = await start();
    const client = await openSession(rig);
    await deferredJob(rig, client);
    await busyFloor(rig, client);
    for (let i = 0; i < 8; i += 1) client.send({ type: 'tool_partial_result', id: 'call_job', content: i });
    const after = client.frames.length;
    raise(client, 'call_job', { id: 'ask-9th', prompt: 'Question?' });
    expect(await client.waitFor('error', () => true, WAIT_MS, after)).toMatchObject({ code: 'partial_limit' });
    await barrier(client);
    expect(statesOf(client, 'ask-9th')).toEqual([]);
    finish(client, rig);
  });
});
