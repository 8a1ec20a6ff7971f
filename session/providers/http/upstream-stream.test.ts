import { createServer, type ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeServer, listenOnLoopback, readBody } from '../../testing/fake-http.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../testing/fake-openai-server.ts';
import { ModelError } from '../llm.ts';
import type { BodySink } from './body-handler.ts';
import { Upstream } from './upstream.ts';

/**
 * Upstream.stream, the dispatch-API path the model adapter streams on: the body reaches the
 * sink as it arrives; the caller's abort cuts it at any point; timeouts, connect retries (never
 * of a started stream) and non-2xx answers behave as request()'s.
 */

/** A sink that records what it receives and lets a test await the end of the body. */
class RecordingSink implements BodySink {
  text = '';
  ended = false;
  failure: Error | undefined;
  readonly done: Promise<void>;
  onData: ((sink: RecordingSink) => void) | undefined;
  private finish!: () => void;

  constructor() {
    this.done = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  data(chunk: Buffer): void {
    this.text += chunk.toString('utf8');
    this.onData?.(this);
  }

  end(): void {
    this.ended = true;
    this.finish();
  }

  error(error: Error): void {
    this.failure = error;
    this.finish();
  }
}

/** A raw server whose handler each test sets; it records when each response's socket closed. */
let raw: ReturnType<typeof createServer>;
let rawUrl = '';
let handler: (res: ServerResponse) => void = (res) => res.end();
let closed: Promise<void>;
let onClosed: () => void = () => {};
let fake: FakeOpenAiServer;
const upstreams: Upstream<ModelError>[] = [];

beforeAll(async () => {
  raw = createServer((req, res) => {
    res.once('close', () => onClosed());
    void readBody(req).then(() => handler(res));
  });
  rawUrl = await listenOnLoopback(raw);
  fake = await startFakeOpenAiServer();
});
afterAll(async () => {
  await closeServer(raw);
  await fake.close();
});
afterEach(async () => {
  await Promise.all(upstreams.splice(0).map((u) => u.close()));
});

function upstream(baseUrl: string, options: { firstByteMs?: number; idleMs?: number; connectRetries?: number } = {}): Upstream<ModelError> {
  const u = new Upstream('the model', ModelError, { baseUrl, apiKey: 'sk-test-key', firstByteMs: options.firstByteMs ?? 2000, idleMs: options.idleMs ?? 2000, ...(options.connectRetries === undefined ? {} : { connectRetries: options.connectRetries }) });
  upstreams.push(u);
  return u;
}

function expectClose(): Promise<void> {
  closed = new Promise((resolve) => {
    onClosed = resolve;
  });
  return closed;
}

const chat = (signal: AbortSignal) => ({ path: 'chat/completions', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }), contentType: 'application/json', accept: 'text/event-stream', signal });

describe('Upstream.stream', () => {
  it('hands the 2xx body to the sink and ends it; the next request reuses the connection', async () => {
    const u = upstream(fake.url);
    const before = fake.connections;
    for (const text of ['one two', 'three']) {
      fake.enqueue({ text });
      const sink = new RecordingSink();
      const handle = await u.stream(chat(new AbortController().signal), sink);
      expect(handle).toBeDefined();
      await sink.done;
      expect(sink.ended).toBe(true);
      expect(sink.failure).toBeUndefined();
      expect(sink.text).toContain('data: [DONE]');
      expect(sink.text).toContain(JSON.stringify(text.split(' ')[0]).slice(0, -1));
      // The body's end is reported from inside undici's parser, before the pool takes the
      // connection back: a request sent in that same tick would open another.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(fake.connections - before).toBe(1);
  });

  it('the caller aborting mid-stream cuts the body: the sink gets CALLER_ABORTED and the server sees its socket close', async () => {
    handler = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[]}\n\n'); // then silence: only the abort can end it
    };
    const serverClosed = expectClose();
    const controller = new AbortController();
    const sink = new RecordingSink();
    sink.onData = () => controller.abort();
    const handle = await upstream(rawUrl).stream(chat(controller.signal), sink);
    expect(handle).toBeDefined();
    await sink.done;
    expect(sink.failure).toBe(Upstream.CALLER_ABORTED);
    expect(sink.ended).toBe(false);
    await serverClosed;
  });

  it('the caller aborting before headers resolves undefined and cuts the request', async () => {
    handler = () => {}; // never answers
    const serverClosed = expectClose();
    const controller = new AbortController();
    // A first-byte timeout far beyond the test's own: only the abort can settle this in time.
    const pending = upstream(rawUrl, { firstByteMs: 60_000 }).stream(chat(controller.signal), new RecordingSink());
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toBeUndefined();
    await serverClosed;
  });

  it('after release() the caller abort no longer cuts the body, which ends normally', async () => {
    let finishBody: () => void = () => {};
    handler = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: [DONE]\n\n');
      finishBody = () => res.end();
    };
    const controller = new AbortController();
    const sink = new RecordingSink();
    const handle = await upstream(rawUrl).stream(chat(controller.signal), sink);
    handle?.release();
    controller.abort();
    finishBody();
    await sink.done;
    expect(sink.failure).toBeUndefined();
    expect(sink.ended).toBe(true);
  });

  it('an informational 103 before the answer is passed over: the 2xx body reaches the sink', async () => {
    handler = (res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload' });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: [DONE]\n\n');
    };
    const sink = new RecordingSink();
    expect(await upstream(rawUrl).stream(chat(new AbortController().signal), sink)).toBeDefined();
    await sink.done;
    expect(sink.ended).toBe(true);
    expect(sink.text).toBe('data: [DONE]\n\n');
  });

  it('no headers within firstByteMs: a timeout error, and the request is cut', async () => {
    handler = () => {};
    const serverClosed = expectClose();
    const started = performance.now();
    const error = await upstream(rawUrl, { firstByteMs: 150 }).stream(chat(new AbortController().signal), new RecordingSink()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).publicDetail).toBe('the model did not answer in time');
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    await serverClosed;
  });

  it('retries connections cut before any answer, up to connectRetries, then reports unreachable', async () => {
    const u = upstream(fake.url, { connectRetries: 2 });
    fake.dropConnections(2);
    fake.enqueue({ text: 'after two cuts' });
    const requestsBefore = fake.requests.length;
    const sink = new RecordingSink();
    expect(await u.stream(chat(new AbortController().signal), sink)).toBeDefined();
    await sink.done;
    expect(sink.text).toContain('cuts');
    expect(fake.requests.length - requestsBefore).toBe(1);

    const connectionsBefore = fake.connections;
    fake.dropConnections(3);
    const error = await upstream(fake.url, { connectRetries: 2 }).stream(chat(new AbortController().signal), new RecordingSink()).catch((e: unknown) => e);
    expect((error as ModelError).publicDetail).toBe('the model could not be reached');
    expect(fake.connections - connectionsBefore).toBe(3);
    expect(fake.requests.length - requestsBefore).toBe(1);
  });

  it('never retries a stream that started: a cut mid-body reaches the sink as broken, after one request', async () => {
    const u = upstream(fake.url);
    fake.enqueue({ failAfterText: 'half an' });
    const requestsBefore = fake.requests.length;
    const sink = new RecordingSink();
    expect(await u.stream(chat(new AbortController().signal), sink)).toBeDefined();
    await sink.done;
    expect(sink.ended).toBe(false);
    expect(sink.failure).toBeDefined();
    expect(u.bodyFailure(sink.failure).publicDetail).toBe('the connection to the model broke mid-answer');
    expect(fake.requests.length - requestsBefore).toBe(1);
  });

  it('a body silent for idleMs fails as stalled', async () => {
    fake.enqueue({ stallAfterText: 'and then' });
    const u = upstream(fake.url, { idleMs: 150 });
    const sink = new RecordingSink();
    await u.stream(chat(new AbortController().signal), sink);
    await sink.done;
    expect(u.bodyFailure(sink.failure).publicDetail).toBe('the model stopped sending mid-answer');
  });

  it('a non-2xx answer throws with its status and the provider message for the log only', async () => {
    fake.enqueue({ status: 429, error: 'Rate limit reached for sk-test-key' });
    const error = (await upstream(fake.url).stream(chat(new AbortController().signal), new RecordingSink()).catch((e: unknown) => e)) as ModelError;
    expect(error).toBeInstanceOf(ModelError);
    expect(error.status).toBe(429);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('Rate limit reached');
    expect(error.message).not.toContain('sk-test-key');
    expect(error.publicDetail).toBe('the model refused the request: rate limited (HTTP 429)');
  });

  it('reads at most the first 4 KB of a large error page', async () => {
    handler = (res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.write('x'.repeat(3000));
      res.write('y'.repeat(3000)); // then the page never ends: only the cap settles it
    };
    const serverClosed = expectClose();
    const error = (await upstream(rawUrl).stream(chat(new AbortController().signal), new RecordingSink()).catch((e: unknown) => e)) as ModelError;
    expect(error.status).toBe(502);
    await serverClosed;
  });
});
