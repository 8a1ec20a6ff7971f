import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestServer, type TestServer } from '../../../signaling/testing/test-server.ts';
import { startSession, type WsTestClient } from '../../../signaling/testing/ws-test-client.ts';
import { eventually, sid, textStart } from '../../../signaling/testing/conversation.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../testing/fake-openai-server.ts';
import { defineTool, ServerToolSet, toolResult as reportOutcome, type ServerTool, type ServerToolContext } from '../../tools/server-tool.ts';
import { ask, done, request, requests, toolNames, toolResult, WAIT_MS, type Rig } from './tool-test-kit.ts';

const transfer = { name: 'transfer', description: 'Move money', requires_permission: true };
// The server-side tool runs in this process but tells the test nothing: its side effects are polled.
const until = (predicate: () => boolean, what: string): Promise<void> => eventually(predicate, WAIT_MS, what);
const waitRequests = (rig: Rig, count: number): Promise<void> => until(() => rig.fake.requests.length >= count, `${count} model request(s)`);

/**
 * Server-side tools (createServer's `tools`): run by the server with the client tools' outcome,
 * timeout, cancellation, progress, partial and permission semantics, and never on the wire as
 * calls: no tool_call, no tool_cancel, and a client cannot answer, cancel or defer them.
 */

const live: Rig[] = [];
afterEach(async () => {
  for (const rig of live.splice(0)) {
    await rig.t.stop();
    await rig.fake.close();
  }
});

async function rigWith(tools: ServerTool[], env: Record<string, string> = {}): Promise<Rig> {
  const fake: FakeOpenAiServer = await startFakeOpenAiServer();
  const t: TestServer = await startTestServer(
    { LLM_PROVIDER: 'openai', LLM_BASE_URL: fake.url, ...env },
    { voice: { ok: false, reason: 'text-only test server' }, tools: new ServerToolSet(tools) },
  );
  const rig = { fake, t };
  live.push(rig);
  return rig;
}

async function open(rig: Rig, mode: Record<string, unknown> = {}, sessionId = sid()): Promise<WsTestClient> {
  const { client } = await startSession(rig.t.wsUrl, { ...textStart(sessionId, { greeting: false, ...mode }), api_key: rig.t.key });
  return client;
}

/** A deferred: the test decides when (and how) a tool's run ends. */
function gate<T = unknown>(): { promise: Promise<T>; resolve(value: T): void; reject(error: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

interface Run {
  args: { city: string; unit?: 'c' | 'f' };
  context: ServerToolContext;
}

/** get_weather: records each run; answers from `answer` (default: a fixed forecast). */
function weatherTool(runs: Run[], answer: (run: Run) => unknown = () => ({ city: 'Paris', temperature_c: 21, sky: 'clear' }), extra: Pick<ServerTool, 'requiresPermission' | 'timeoutMs'> = {}): ServerTool {
  return defineTool({
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: z.object({ city: z.string().min(1).describe('city name'), unit: z.enum(['c', 'f']).optional() }),
    ...extra,
    run: (args, context) => {
      const run = { args, context };
      runs.push(run);
      return answer(run);
    },
  });
}

const noToolFrames = (client: WsTestClient) => client.frames.filter((f) => f.type === 'tool_call' || f.type === 'tool_cancel');

describe('server-side tools: declaration', () => {
  it('the model sees them as JSON Schema from zod beside the client tools; a client may not take their names', async () => {
    const rig = await rigWith([weatherTool([])]);
    rig.fake.enqueue({ text: 'Hello.' });
    const client = await open(rig, { tools: [{ name: 'lookup', parameters: { type: 'object', properties: {} } }] });
    await ask(client, 'hi');
    await waitRequests(rig, 1);
    const body = request(rig, 0);
    expect(toolNames(body)).toEqual(expect.arrayContaining(['lookup', 'get_weather']));
    const declared = body.tools?.find((t) => t.function.name === 'get_weather')?.function;
    expect(declared).toEqual({
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', minLength: 1, description: 'city name' }, unit: { type: 'string', enum: ['c', 'f'] } },
        required: ['city'],
      },
    });

    // set_tools taking the name is refused; the old list stays.
    client.send({ type: 'set_tools', tools: [{ name: 'get_weather' }] });
    const refused = await client.waitFor('error', (f) => f.code === 'invalid_tools', WAIT_MS);
    expect(refused.detail).toMatch(/"get_weather" is a server-side tool/);
    // A tool choice may name it.
    client.send({ type: 'set_tool_choice', tool_choice: { tool: 'get_weather' } });
    client.send({ type: 'set_tool_choice', tool_choice: { tool: 'nope' } });
    const bad = await client.waitFor('error', (f) => f.code === 'invalid_tools' && /nope/.test(f.detail), WAIT_MS);
    expect(bad.detail).not.toMatch(/get_weather/);
    client.assertProtocol();

    // At start the same name is a fatal invalid_tools.
    const other = await startSession(rig.t.wsUrl, { ...textStart(sid(), { tools: [{ name: 'get_weather' }] }), api_key: rig.t.key }).catch((error: Error) => error);
    expect(String(other)).toMatch(/invalid_tools/);
  });

  it('a bad definition is refused when the server is made, naming the tool', () => {
    const tool = (name: string, parameters: z.ZodType = z.object({})) => defineTool({ name, parameters, run: () => 1 });
    expect(() => new ServerToolSet([tool('has space')])).toThrow(/server tool "has space": names are/);
    expect(() => new ServerToolSet([tool('end_call')])).toThrow(/reserved for a managed tool/);
    expect(() => new ServerToolSet([tool('a'), tool('a')])).toThrow(/"a": defined twice/);
    expect(() => new ServerToolSet([tool('s', z.string())])).toThrow(/"s": parameters must be a zod object schema/);
    expect(() => new ServerToolSet([defineTool({ name: 't', parameters: z.object({}), timeoutMs: 5, run: () => 1 })])).toThrow(/timeoutMs/);
  });
});

describe('server-side tools: a call', () => {
  it('runs with parsed arguments and its session in the context; the model gets succeeded + verified; nothing on the wire but working', async () => {
    const runs: Run[] = [];
    const slow = gate();
    const rig = await rigWith([weatherTool(runs, async () => (await slow.promise, { city: 'Paris', temperature_c: 21 }))]);
    rig.fake.enqueue({ toolCalls: [{ id: 'call_w', name: 'get_weather', args: { city: 'Paris' } }] }, { text: 'It is 21 degrees in Paris.' });
    const sessionId = sid();
    const client = await open(rig, {}, sessionId);
    const { turnId } = await ask(client, 'weather in Paris?');
    await until(() => runs.length === 1, 'the tool ran');
    expect(runs[0]?.args).toEqual({ city: 'Paris' });
    expect(runs[0]?.context).toMatchObject({ sessionId, account: 'acme', callId: 'call_w' });
    expect(runs[0]?.context.signal.aborted).toBe(false);
    await client.waitFor('working', (f) => f.active, WAIT_MS);
    slow.resolve(undefined);
    expect((await done(client, turnId)).status).toBe('completed');
    expect(toolResult(request(rig, 1), 'call_w')).toEqual({ outcome: 'succeeded', verified: true, content: { city: 'Paris', temperature_c: 21 } });
    expect(client.all('utterance').at(-1)?.text).toBe('It is 21 degrees in Paris.');
    expect(client.all('working').map((f) => f.active)).toEqual([true, false]);
    expect(noToolFrames(client)).toEqual([]);
    client.assertProtocol();
  });

  it('arguments its schema refuses never reach it: the model is told failed, with the reason', async () => {
    const runs: Run[] = [];
    const rig = await rigWith([weatherTool(runs)]);
    rig.fake.enqueue({ toolCalls: [{ id: 'call_bad', name: 'get_weather', args: { city: '', unit: 'kelvin' } }] }, { text: 'Sorry.' });
    const client = await open(rig);
    const { turnId } = await ask(client, 'weather?');
    await done(client, turnId);
    expect(runs).toEqual([]);
    const told = toolResult(request(rig, 1), 'call_bad');
    expect(told).toMatchObject({ outcome: 'failed', verified: false });
    expect(told?.content).toMatch(/^invalid arguments: city: .*; unit: /);
  });

  it('a throw is failed with its message; toolResult keeps its outcome; a result that is not JSON is failed', async () => {
    const tools = [
      defineTool({ name: 'boom', parameters: z.object({}), run: () => Promise.reject(new Error('upstream said no')) }),
      defineTool({ name: 'maybe', parameters: z.object({}), run: () => reportOutcome({ outcome: 'unknown', content: 'sent, not confirmed' }) }),
      defineTool({ name: 'unverified', parameters: z.object({}), run: () => reportOutcome({ outcome: 'succeeded', content: 'done', verified: false }) }),
      defineTool({ name: 'bigint', parameters: z.object({}), run: () => ({ n: 1n }) }),
    ];
    const rig = await rigWith(tools);
    rig.fake.enqueue({ toolCalls: tools.map((t) => ({ id: `call_${t.name}`, name: t.name, args: {} })) }, { text: 'Reported.' });
    const client = await open(rig);
    const { turnId } = await ask(client, 'try them all');
    await done(client, turnId);
    const body = request(rig, 1);
    expect(toolResult(body, 'call_boom')).toEqual({ outcome: 'failed', verified: false, content: 'upstream said no' });
    expect(toolResult(body, 'call_maybe')).toEqual({ outcome: 'unknown', verified: false, content: 'sent, not confirmed' });
    expect(toolResult(body, 'call_unverified')).toEqual({ outcome: 'succeeded', verified: false, content: 'done' });
    expect(toolResult(body, 'call_bigint')).toMatchObject({ outcome: 'failed', verified: false, content: expect.stringMatching(/not JSON/) });
  });

  it('times out like a client call: timed_out for the model, its signal aborted, no tool_cancel frame', async () => {
    const runs: Run[] = [];
    const rig = await rigWith([weatherTool(runs, () => new Promise(() => undefined), { timeoutMs: 200 })]);
    rig.fake.enqueue({ toolCalls: [{ id: 'call_slow', name: 'get_weather', args: { city: 'Oslo' } }] }, { text: 'It took too long.' });
    const client = await open(rig);
    const { turnId } = await ask(client, 'weather in Oslo?');
    await done(client, turnId);
    expect(toolResult(request(rig, 1), 'call_slow')).toMatchObject({ outcome: 'timed_out', verified: false });
    expect(runs[0]?.context.signal.aborted).toBe(true);
    expect(runs[0]?.context.signal.reason).toBe('timed_out');
    expect(noToolFrames(client)).toEqual([]);
  });

  it('a client cannot answer, cancel, report on or defer a server call: unknown_tool_call, nothing changes', async () => {
    const runs: Run[] = [];
    const finish = gate();
    const rig = await rigWith([weatherTool(runs, async () => (await finish.promise, 'sunny'))]);
    rig.fake.enqueue({ toolCalls: [{ id: 'call_w', name: 'get_weather', args: { city: 'Rome' } }] }, { text: 'Sunny in Rome.' });
    const client = await open(rig);
    const { turnId } = await ask(client, 'weather in Rome?');
    await until(() => runs.length === 1, 'the tool ran');
    for (const frame of [
      { type: 'tool_result', id: 'call_w', content: 'rain', outcome: 'succeeded', verified: true },
      { type: 'tool_cancel', id: 'call_w' },
      { type: 'tool_progress', id: 'call_w', note: 'fake' },
      { type: 'tool_partial_result', id: 'call_w', content: 'fake' },
    ]) {
      const after = client.frames.length;
      client.send(frame);
      const error = await client.waitFor('error', () => true, WAIT_MS, after);
      expect(error.code, frame.type).toBe('unknown_tool_call');
    }
    client.send({ type: 'tool_deferred', id: 'call_w', handle: 'h1' });
    expect(await client.waitFor('tool_deferred_ack', () => true, WAIT_MS)).toMatchObject({ accepted: false, reason: 'unknown_call' });
    expect(runs[0]?.context.signal.aborted).toBe(false);
    finish.resolve(undefined);
    await done(client, turnId);
    expect(toolResult(request(rig, 1), 'call_w')).toEqual({ outcome: 'succeeded', verified: true, content: 'sunny' });
    client.assertProtocol();
  });
});

describe('server-side tools: progress, partials, permission', () => {
  it('progress and partial results reach the model as the client frames would; the same limits hold', async () => {
    const outcomes: string[] = [];
    const release = gate();
    const tool = defineTool({
      name: 'survey',
      parameters: z.object({}),
      run: async (_args, context) => {
        context.progress('asked 3 of 5 people');
        outcomes.push(context.partial({ answers: 3 }));
        outcomes.push(context.partial('x'.repeat(3000)));
        for (let i = 0; i < 8; i += 1) outcomes.push(context.partial(i));
        await release.promise;
        return { answers: 5 };
      },
    });
    const rig = await rigWith([tool]);
    rig.fake.enqueue({ toolCalls: [{ id: 'call_s', name: 'survey', args: {} }] }, { text: 'Five answers.' });
    const client = await open(rig);
    const { turnId } = await ask(client, 'run the survey');
    await until(() => outcomes.length === 10, 'the partials were sent');
    expect(outcomes).toEqual(['ok', 'partial_too_large', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'partial_limit']);
    release.resolve(undefined);
    await done(client, turnId);
    const context = request(rig, 1).messages.map((m) => m.content ?? '').join('\n');
    expect(context).toContain('Progress on survey (call call_s): asked 3 of 5 people');
    expect(context).toContain('Partial result 1 from survey (call call_s): {"answers":3}');
    expect(context).toContain('Partial result 8 from survey (call call_s): 6');
    expect(context).not.toContain('Partial result 9');
  });

  it('requiresPermission holds it for the user: refused never runs (cancelled), approved runs', async () => {
    const runs: Run[] = [];
    const rig = await rigWith([weatherTool(runs, () => 'sunny', { requiresPermission: true })]);
    rig.fake.enqueue(
      { toolCalls: [{ id: 'call_1', name: 'get_weather', args: { city: 'Rome' } }] }, { text: 'Not checked.' },
      { toolCalls: [{ id: 'call_2', name: 'get_weather', args: { city: 'Rome' } }] }, { text: 'Sunny.' },
    );
    const client = await open(rig);
    const first = await ask(client, 'weather in Rome?');
    const held = await client.waitFor('permission_pending', () => true, WAIT_MS);
    expect(held).toMatchObject({ tool: 'get_weather', arguments: { city: 'Rome' } });
    client.send({ type: 'confirm_tool_permission', approval_id: held.id, approved: false });
    await done(client, first.turnId);
    expect(runs).toEqual([]);
    expect(toolResult(request(rig, 1), 'call_1')).toMatchObject({ outcome: 'cancelled', verified: false });

    const second = await ask(client, 'weather in Rome, please?');
    const again = await client.waitFor('permission_pending', (f) => f.id !== held.id, WAIT_MS);
    client.send({ type: 'confirm_tool_permission', approval_id: again.id, approved: true });
    await done(client, second.turnId);
    expect(runs).toHaveLength(1);
    expect(toolResult(request(rig, 3), 'call_2')).toEqual({ outcome: 'succeeded', verified: true, content: 'sunny' });
    expect(noToolFrames(client)).toEqual([]);
    client.assertProtocol();
  });
});

describe('server-side tools: interruption, session end, resume', () => {
  it('an interrupted turn leaves the call running; its late result enters the context and is told', async () => {
    const runs: Run[] = [];
    const finish = gate();
    const rig = await rigWith([weatherTool(runs, async () => (await finish.promise, { sky: 'stormy' }))]);
    rig.fake.enqueue({ toolCalls: [{ id: 'call_w', name: 'get_weather', args: { city: 'Lima' } }] });
    rig.fake.script((body: { messages: { content: string | null }[] }) =>
      body.messages.some((m) => (m.content ?? '').includes('arrived after its turn had moved on')) ? { text: 'Update: stormy in Lima.' } : { text: 'ok' },
    );
    const client = await open(rig);
    const { turnId } = await ask(client, 'weather in Lima?');
    await until(() => runs.length === 1, 'the tool ran');
    client.send({ type: 'interrupt' });
    expect((await done(client, turnId)).status).toBe('interrupted');
    expect(runs[0]?.context.signal.aborted).toBe(false);
    finish.resolve(undefined);
    await client.waitFor('utterance', (f) => f.text === 'Update: stormy in Lima.', WAIT_MS);
    const told = requests(rig).at(-1)?.messages.map((m) => m.content ?? '').join('\n') ?? '';
    expect(told).toMatch(/Result of get_weather \(call call_w\) arrived after its turn had moved on: \{"outcome":"succeeded","verified":true,"content":\{"sky":"stormy"\}\}/);
    expect(noToolFrames(client)).toEqual([]);
  });

  it('the session ending stops it (signal aborted); a resumed conversation is told it was stopped', async () => {
    const runs: Run[] = [];
    const rig = await rigWith([weatherTool(runs, () => new Promise(() => undefined))]);
    rig.fake.enqueue({ toolCalls: [{ id: 'call_w', name: 'get_weather', args: { city: 'Kyiv' } }] }, { text: 'ok' });
    rig.fake.script(() => ({ text: 'Still here.' }));
    const sessionId = sid();
    const { client, ready } = await startSession(rig.t.wsUrl, { ...textStart(sessionId, { greeting: false }), api_key: rig.t.key });
    await ask(client, 'weather in Kyiv?');
    await until(() => runs.length === 1, 'the tool ran');
    client.ws.close(4000, 'network lost');
    await client.waitClose(WAIT_MS);
    await until(() => runs[0]?.context.signal.aborted === true, 'the run was stopped');
    expect(runs[0]?.context.signal.reason).toBe('session_closed');

    const resumed = await startSession(rig.t.wsUrl, { ...textStart(sessionId, { greeting: false }), api_key: rig.t.key, resume_token: ready.resume_token });
    const before = requests(rig).length;
    const { turnId } = await ask(resumed.client, 'are you there?');
    await done(resumed.client, turnId);
    const context = request(rig, before).messages.map((m) => m.content ?? '').join('\n');
    expect(context).toContain('get_weather (call call_w) was stopped when the connection dropped, before it finished');
    expect(runs).toHaveLength(1);
    resumed.client.assertProtocol();
  });
});

describe('server-side tools beside client tools', () => {
  it('one round with both: the client answers its own call, the server runs its own, the model gets both', async () => {
    const rig = await rigWith([weatherTool([])]);
    rig.fake.enqueue(
      { toolCalls: [{ id: 'call_c', name: 'transfer', args: { amount: 5 } }, { id: 'call_s', name: 'get_weather', args: { city: 'Paris' } }] },
      { text: 'Both done.' },
    );
    const client = await open(rig, { tools: [{ ...transfer, requires_permission: false }] });
    const { turnId } = await ask(client, 'pay and check the weather');
    const call = await client.waitFor('tool_call', () => true, WAIT_MS);
    expect(call.id).toBe('call_c');
    client.send({ type: 'tool_result', id: 'call_c', content: 'paid', outcome: 'succeeded', verified: true });
    await done(client, turnId);
    const body = request(rig, 1);
    expect(toolResult(body, 'call_c')).toEqual({ outcome: 'succeeded', verified: true, content: 'paid' });
    expect(toolResult(body, 'call_s')).toMatchObject({ outcome: 'succeeded', verified: true });
    expect(client.all('tool_call')).toHaveLength(1);
    client.assertProtocol();
  });
});
