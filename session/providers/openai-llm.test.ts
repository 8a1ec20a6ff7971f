import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer } from '../testing/fake-openai-server.ts';
import type { FakeOpenAiServer } from '../testing/fake-openai-server.ts';
import { ModelError } from './llm.ts';
import type { ModelEvent, ModelRequest } from './llm.ts';
import { OpenAiLanguageModel } from './openai-llm.ts';
import type { OpenAiLanguageModelOptions } from './openai-llm.ts';

interface SentBody {
  model: string;
  stream: boolean;
  temperature?: number;
  messages: unknown[];
  tools?: { type: string; function: { name: string; description?: string; parameters: unknown } }[];
  tool_choice?: unknown;
}

let server: FakeOpenAiServer;

beforeEach(async () => {
  server = await startFakeOpenAiServer();
});

afterEach(async () => {
  await server.close();
});

function model(options: Partial<OpenAiLanguageModelOptions> = {}): OpenAiLanguageModel {
  return new OpenAiLanguageModel({ baseUrl: `${server.url}/`, model: 'test-model', ...options });
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    toolChoice: 'auto',
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function collect(events: AsyncIterable<ModelEvent>): Promise<ModelEvent[]> {
  const out: ModelEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

function text(events: ModelEvent[]): string {
  return events.map((e) => (e.type === 'text' ? e.delta : '')).join('');
}

async function failure(events: AsyncIterable<ModelEvent>): Promise<ModelError> {
  const error = await collect(events).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

function lastBody(): SentBody {
  return server.requests.at(-1) as SentBody;
}

const tools = [
  { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  { name: 'get_time' },
];

describe('OpenAiLanguageModel streaming text', () => {
  it('concatenates streamed deltas and finishes with stop', async () => {
    server.enqueue({ text: 'Hello there, how are you?' });
    const events = await collect(model().stream(request()));
    expect(events.filter((e) => e.type === 'text').length).toBeGreaterThan(1);
    expect(events.some((e) => e.type === 'text' && e.delta === '')).toBe(false);
    expect(text(events)).toBe('Hello there, how are you?');
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect(events.filter((e) => e.type === 'finish')).toHaveLength(1);
  });

  it('exposes its name from the configured model', () => {
    expect(model().name).toBe('openai:test-model');
  });

  it('parses SSE lines split across TCP chunks, CRLF line ends and keep-alive comments', async () => {
    const chunk = (content: string): string =>
      `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}`;
    const first = `${chunk('Hel')}\r\n\r\n`;
    const second = `${chunk('lo')}\n\n`;
    const finish = `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`;
    server.enqueue({
      raw: [': keep-alive\n\n', first.slice(0, 17), first.slice(17, first.length - 3), first.slice(-3), second.slice(0, 6), second.slice(6) + finish + 'data: [DO', 'NE]\n\n'],
    });
    // The fake writes each piece 20 ms apart with Nagle off, so they arrive as separate reads
    // (sse.test.ts checks every split point of the parser itself).
    const events = await collect(model().stream(request()));
    expect(text(events)).toBe('Hello');
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });

  it('reuses one keep-alive connection for consecutive requests', async () => {
    const m = model();
    for (let i = 0; i < 5; i += 1) {
      server.enqueue({ text: `reply ${i}` });
      expect(text(await collect(m.stream(request())))).toBe(`reply ${i}`);
    }
    expect(server.requests).toHaveLength(5);
    // The next request may start while the last one's chunked terminator is still being read,
    // so a second connection may open; never one per request.
    expect(server.connections).toBeLessThanOrEqual(2);
    await m.close();
  });
});

describe('OpenAiLanguageModel request mapping', () => {
  it('sends model, messages, temperature, stream and function-shaped tools', async () => {
    await collect(
      model().stream(
        request({
          temperature: 0.3,
          tools,
          messages: [
            { role: 'system', content: 'be brief' },
            { role: 'user', content: 'weather?' },
            { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'get_weather', args: { city: 'Oslo' } }] },
            { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
            { role: 'assistant', content: 'It is sunny.' },
          ],
        }),
      ),
    );
    const body = lastBody();
    expect(body.model).toBe('test-model');
    expect(body.stream).toBe(true);
    expect(body.temperature).toBe(0.3);
    expect(body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'assistant', content: 'It is sunny.' },
    ]);
    expect(body.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: tools[0]!.parameters } },
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(body.tool_choice).toBe('auto');
  });

  it('lets the request override the model and omits temperature when unset', async () => {
    await collect(model().stream(request({ model: 'deep-model' })));
    expect(lastBody().model).toBe('deep-model');
    expect('temperature' in lastBody()).toBe(false);
  });

  it('omits tools and tool_choice when no tool is offered', async () => {
    await collect(model().stream(request({ tools: [], toolChoice: 'required' })));
    expect('tools' in lastBody()).toBe(false);
    expect('tool_choice' in lastBody()).toBe(false);
    await collect(model().stream(request({ tools, toolChoice: { allowed: ['nope'] } })));
    expect('tools' in lastBody()).toBe(false);
    expect('tool_choice' in lastBody()).toBe(false);
  });

  it.each([
    ['auto', 'auto'],
    ['none', 'none'],
    ['required', 'required'],
  ] as const)('maps tool choice %s to the string', async (choice, wire) => {
    await collect(model().stream(request({ tools, toolChoice: choice })));
    expect(lastBody().tool_choice).toBe(wire);
    expect(lastBody().tools).toHaveLength(2);
  });

  it('maps a forced tool to the function form', async () => {
    await collect(model().stream(request({ tools, toolChoice: { tool: 'get_time' } })));
    expect(lastBody().tool_choice).toEqual({ type: 'function', function: { name: 'get_time' } });
    expect(lastBody().tools).toHaveLength(2);
  });

  it('maps allowed tools to a filtered tool list with auto', async () => {
    await collect(model().stream(request({ tools, toolChoice: { allowed: ['get_time'] } })));
    expect(lastBody().tool_choice).toBe('auto');
    expect(lastBody().tools?.map((t) => t.function.name)).toEqual(['get_time']);
  });

  it('sends a bearer token only when an api key is configured', async () => {
    await collect(model({ apiKey: 'sk-test' }).stream(request()));
    await collect(model().stream(request()));
    expect(server.headers[0]?.authorization).toBe('Bearer sk-test');
    expect(server.headers[1]?.authorization).toBeUndefined();
  });
});

describe('OpenAiLanguageModel tool calls', () => {
  it('accumulates argument fragments into complete calls after the text', async () => {
    server.enqueue({
      text: 'Checking.',
      toolCalls: [
        { id: 'call_a', name: 'get_weather', args: { city: 'Oslo', units: 'metric' } },
        { id: 'call_b', name: 'get_time', args: {} },
      ],
    });
    const events = await collect(model().stream(request({ tools })));
    expect(text(events)).toBe('Checking.');
    expect(events.filter((e) => e.type !== 'text')).toEqual([
      { type: 'tool_call', call: { id: 'call_a', name: 'get_weather', args: { city: 'Oslo', units: 'metric' } } },
      { type: 'tool_call', call: { id: 'call_b', name: 'get_time', args: {} } },
      // stream_options.include_usage: the fake counts one completion token per piece streamed.
      { type: 'usage', inputTokens: expect.any(Number), outputTokens: 8 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('turns malformed or non-object arguments into {} and reports a warning', async () => {
    server.enqueue({
      toolCalls: [
        { id: 'c1', name: 'get_weather', args: '{"city": "Osl' },
        { id: 'c2', name: 'get_time', args: '[1,2]' },
      ],
    });
    const warnings: string[] = [];
    const events = await collect(model({ onWarning: (m) => warnings.push(m) }).stream(request({ tools })));
    const calls = events.flatMap((e) => (e.type === 'tool_call' ? [e.call] : []));
    expect(calls).toEqual([
      { id: 'c1', name: 'get_weather', args: {} },
      { id: 'c2', name: 'get_time', args: {} },
    ]);
    expect(warnings).toHaveLength(2);
  });

  it('generates an id when the server sends none', async () => {
    const delta = (d: unknown, finish: string | null = null): string =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: d, finish_reason: finish }] })}\n\n`;
    server.enqueue({
      raw: [
        delta({ tool_calls: [{ index: 0, function: { name: 'get_time', arguments: '{"tz":' } }] }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '"UTC"}' } }] }),
        delta({}, 'tool_calls'),
        'data: [DONE]\n\n',
      ],
    });
    const events = await collect(model().stream(request({ tools })));
    const call = events.find((e) => e.type === 'tool_call');
    expect(call?.type === 'tool_call' && call.call.id).toMatch(/^call_\w+$/);
    expect(call?.type === 'tool_call' && call.call.args).toEqual({ tz: 'UTC' });
  });
});

describe('OpenAiLanguageModel errors', () => {
  it('maps 429 to a retryable ModelError carrying status and message', async () => {
    server.enqueue({ status: 429, error: 'Rate limit reached' });
    const error = await failure(model().stream(request()));
    expect(error.retryable).toBe(true);
    expect(error.status).toBe(429);
    expect(error.message).toContain('429');
    expect(error.message).toContain('Rate limit reached');
    expect(error.publicDetail).toBe('the model refused the request: rate limited (HTTP 429)');
  });

  it('maps 400 to a non-retryable ModelError and 503 to a retryable one', async () => {
    server.enqueue({ status: 400, error: 'bad tools' }, { status: 503, error: 'loading model' });
    const bad = await failure(model().stream(request()));
    expect(bad.retryable).toBe(false);
    expect(bad.status).toBe(400);
    const busy = await failure(model().stream(request()));
    expect(busy.retryable).toBe(true);
  });

  it('truncates long error messages', async () => {
    server.enqueue({ status: 500, error: 'x'.repeat(5000) });
    const error = await failure(model().stream(request()));
    expect(error.message.length).toBeLessThan(400);
  });

  it('throws a retryable ModelError when the connection drops mid-stream', async () => {
    server.enqueue({ failAfterText: 'partial answer' });
    const seen: ModelEvent[] = [];
    const stream = model().stream(request());
    const error = await collect(
      (async function* () {
        for await (const event of stream) {
          seen.push(event);
          yield event;
        }
      })(),
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).retryable).toBe(true);
    expect(seen.some((e) => e.type === 'finish')).toBe(false);
  });

  it('throws "stream ended early" when the body ends without finish_reason or [DONE]', async () => {
    server.enqueue({ raw: [`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'hal' } }] })}\n\n`] });
    const error = await failure(model().stream(request()));
    expect(error.publicDetail).toBe('the model ended its answer early');
    expect(error.retryable).toBe(true);
  });

  it('throws on an error object inside the stream', async () => {
    server.enqueue({ raw: [`data: ${JSON.stringify({ error: { message: 'context overflow', type: 'server_error' } })}\n\n`] });
    const error = await failure(model().stream(request()));
    expect(error.message).toContain('context overflow');
  });

  it('throws a retryable ModelError when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await failure(new OpenAiLanguageModel({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm' }).stream(request()));
    expect(error.retryable).toBe(true);
  });

  it('bounds the wait for response headers with timeoutMs', async () => {
    server.enqueue({ hang: true, beforeHeaders: true });
    const error = await failure(model({ timeoutMs: 100 }).stream(request()));
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('100 ms');
    expect(error.publicDetail).toBe('the model did not answer in time');
  });
});

describe('OpenAiLanguageModel abort', () => {
  async function abortWhileHanging(beforeHeaders: boolean): Promise<ModelEvent[]> {
    server.enqueue({ hang: true, beforeHeaders });
    const controller = new AbortController();
    const pending = collect(model().stream(request({ signal: controller.signal })));
    await expect.poll(() => server.requests.length).toBe(1);
    controller.abort();
    // A hang never ends on its own, so resolving at all proves the abort stopped the stream.
    return await pending;
  }

  it('returns silently without finish when aborted mid-stream', async () => {
    expect(await abortWhileHanging(false)).toEqual([]);
  });

  it('returns silently when aborted before response headers', async () => {
    expect(await abortWhileHanging(true)).toEqual([]);
  });

  it('does not even connect when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await collect(model().stream(request({ signal: controller.signal })))).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('an abort once [DONE] is in no longer cuts the connection: the body runs to its end and the next request reuses it', async () => {
    const content = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }] })}\n\n`;
    // The body goes on for 60 ms after [DONE] (a trailing comment), so the abort lands mid-body.
    server.enqueue({ raw: [content, 'data: [DONE]\n\n', ': trailing\n\n'], gapMs: 60 });
    const m = model();
    const controller = new AbortController();
    const events: ModelEvent[] = [];
    for await (const event of m.stream(request({ signal: controller.signal }))) {
      events.push(event);
      if (event.type === 'finish') controller.abort();
    }
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    await new Promise((resolve) => setTimeout(resolve, 250));
    server.enqueue({ text: 'again' });
    expect(text(await collect(m.stream(request())))).toBe('again');
    expect(server.connections).toBe(1);
    await m.close();
  });

  it('stops yielding after an abort between events', async () => {
    server.delayMs = 20;
    server.enqueue({ text: 'one two three four five six seven eight' });
    const controller = new AbortController();
    const events: ModelEvent[] = [];
    for await (const event of model().stream(request({ signal: controller.signal }))) {
      events.push(event);
      if (events.length === 2) controller.abort();
    }
    expect(events).toHaveLength(2);
  });
});
