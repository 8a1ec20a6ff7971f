import { createServer } from 'node:http';
import { describe, expect, it as base } from 'vitest';
import { closeServer, listenOnLoopback, sendJson } from '../../testing/fake-http.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../testing/fake-openai-server.ts';
import { startFakeOpenAiSpeechServer, tone, type FakeOpenAiSpeechServer } from '../../testing/fake-openai-speech-server.ts';
import { ModelError, type ModelEvent, type ModelRequest } from '../llm.ts';
import { OpenAiSpeechToText } from '../openai-asr.ts';
import { OpenAiLanguageModel } from '../openai-llm.ts';
import { OpenAiTextToSpeech } from '../openai-tts.ts';
import { ProviderError } from '../provider-error.ts';
import { SearxngSearch } from '../searxng-search.ts';

/**
 * Provider faults through real sockets, for every adapter: a stall at each point of a stream
 * becomes an error within the idle timeout (never a hang), connection failures before an answer
 * are retried and a started stream never is, and no error a client could read quotes the provider.
 */

const IDLE_MS = 400;
const KEY = 'sk-proj-4f9Qx7LmT2vR8sKp3Zb6Nw1Yc5Hd0Jg';

// Every test has fakes of its own, so the tests run side by side: most of their time is spent
// waiting out timeouts, which undici checks on a 1 s tick.
const it = base.extend<{ llm: FakeOpenAiServer; speech: FakeOpenAiSpeechServer }>({
  llm: async ({}, use) => {
    const fake = await startFakeOpenAiServer();
    await use(fake);
    await fake.close();
  },
  speech: async ({}, use) => {
    const fake = await startFakeOpenAiSpeechServer();
    await use(fake);
    await fake.close();
  },
});

function model(llm: FakeOpenAiServer): OpenAiLanguageModel {
  return new OpenAiLanguageModel({ baseUrl: llm.url, apiKey: KEY, model: 'm', timeoutMs: 2000, idleTimeoutMs: IDLE_MS });
}

function request(signal = new AbortController().signal): ModelRequest {
  return { messages: [{ role: 'user', content: 'hi' }], tools: [], toolChoice: 'auto', signal };
}

/** Runs the stream to its end; returns the text seen and the error it ended with, if any. */
async function run(events: AsyncIterable<ModelEvent>): Promise<{ text: string; error: ProviderError | undefined; ms: number }> {
  const started = performance.now();
  let text = '';
  try {
    for await (const event of events) if (event.type === 'text') text += event.delta;
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderError);
    return { text, error: error as ProviderError, ms: performance.now() - started };
  }
  return { text, error: undefined, ms: performance.now() - started };
}

const chunk = (content: string): string => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

describe.concurrent('LLM stream faults', () => {
  it('a stream that stalls after its first chunks fails as stalled after the idle timeout', async ({ llm }) => {
    llm.enqueue({ stallAfterText: 'Half an ans' });
    const { text, error, ms } = await run(model(llm).stream(request()));
    expect(text).toBe('Half an ans');
    expect(error).toBeInstanceOf(ModelError);
    expect(error!.publicDetail).toBe('the model stopped sending mid-answer');
    expect(error!.retryable).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(IDLE_MS - 10);
  });

  it('stalls at every other point: right after headers, inside an event, after the last chunk before [DONE]', async ({ llm }) => {
    const finish = `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`;
    for (const raw of [[], [chunk('a').slice(0, 9)], [chunk('a'), finish.slice(0, -1)]]) {
      llm.enqueue({ raw, then: 'stall' });
      const { error } = await run(model(llm).stream(request()));
      expect(error?.publicDetail).toBe('the model stopped sending mid-answer');
    }
  });

  it('slow bytes inside the idle timeout are fine: one byte per read', async ({ llm }) => {
    const body = chunk('slow') + 'data: [DONE]\n\n';
    llm.enqueue({ raw: [...body], gapMs: 2 });
    const { text, error } = await run(model(llm).stream(request()));
    expect(error).toBeUndefined();
    expect(text).toBe('slow');
  });

  it('an early EOF is a broken stream (retryable), a bad SSE payload a malformed one', async ({ llm }) => {
    llm.enqueue({ raw: [chunk('cut')], then: 'destroy' });
    const broken = await run(model(llm).stream(request()));
    expect(broken.text).toBe('cut');
    expect(broken.error?.publicDetail).toBe('the connection to the model broke mid-answer');
    expect(broken.error?.retryable).toBe(true);
    llm.enqueue({ raw: ['data: {"choices": [tru\n\n'] });
    const malformed = await run(model(llm).stream(request()));
    expect(malformed.error?.publicDetail).toBe('the model sent an answer that could not be read');
    expect(malformed.error?.message).toContain('not JSON');
  });

  it('retries a connection cut before any answer; never a stream that started', async ({ llm }) => {
    const m = model(llm);
    llm.dropConnections(2);
    const before = llm.requests.length;
    llm.enqueue({ text: 'after two cuts' });
    expect((await run(m.stream(request()))).text).toBe('after two cuts');
    expect(llm.requests.length - before).toBe(1);

    // A retry would have been answered 'ok' (the default reply) and succeeded.
    llm.enqueue({ failAfterText: 'started ' });
    const started = await run(m.stream(request()));
    expect(started.error?.publicDetail).toBe('the connection to the model broke mid-answer');
    expect(llm.requests.length - before).toBe(2);

    await m.close();
    // A fresh pool: the kept-alive connection would otherwise carry the request.
    llm.dropConnections(3);
    const unreachable = await run(model(llm).stream(request()));
    expect(unreachable.error?.publicDetail).toBe('the model could not be reached');
    expect(llm.requests.length - before).toBe(2);
  });

  it('an abort during a stall ends the stream at once and quietly', async ({ llm }) => {
    llm.enqueue({ stallAfterText: 'wait' });
    const controller = new AbortController();
    const m = new OpenAiLanguageModel({ baseUrl: llm.url, model: 'm', idleTimeoutMs: 60_000 });
    const before = llm.requests.length;
    const pending = run(m.stream(request(controller.signal)));
    await expect.poll(() => llm.requests.length).toBeGreaterThan(before);
    setTimeout(() => controller.abort(), 50);
    const { text, error, ms } = await pending;
    expect(error).toBeUndefined();
    expect(text).toBe('wait');
    expect(ms).toBeLessThan(5000);
  });
});

describe.concurrent('what a client and the log may read of a provider error', () => {
  const body = JSON.stringify({
    error: {
      message: `Incorrect API key provided: sk-proj-****Hd0Jg. You can find your API key at https://platform.example.com/account/api-keys. Upstream inference-7.internal.corp:8443 said ${KEY}`,
      type: 'invalid_request_error',
    },
  });

  it('the public detail is ours; the log detail keeps the gist without URLs, hosts or keys', async ({ llm }) => {
    llm.enqueue({ status: 401, body, contentType: 'application/json' });
    const { error } = await run(model(llm).stream(request()));
    expect(error!.publicDetail).toBe('the model refused the request: credentials not accepted (HTTP 401)');
    expect(error!.message).toContain('Incorrect API key provided');
    for (const secret of ['sk-proj', 'Hd0Jg', '****', 'https://', 'platform.example.com', 'inference-7', '8443', KEY]) {
      expect(error!.message).not.toContain(secret);
      expect(error!.publicDetail).not.toContain(secret);
    }
  });

  it('a proxy page naming internal hosts stays out of the public detail', async ({ speech }) => {
    speech.scriptTranscription(() => ({ status: 502, body: '<html>502 Bad Gateway: upstream 10.2.3.4:9000 (asr-gpu-3.svc.cluster.local:8080) refused</html>', contentType: 'text/html' }));
    const stream = new OpenAiSpeechToText({ baseUrl: speech.url, model: 'w' }).open();
    stream.write(new Int16Array(800));
    const error = (await stream.finish().catch((e: unknown) => e)) as ProviderError;
    expect(error.publicDetail).toBe('speech recognition refused the request: provider failure (HTTP 502)');
    expect(error.message).toContain('Bad Gateway');
    for (const secret of ['10.2.3.4', 'asr-gpu-3', '9000', '8080']) expect(error.message).not.toContain(secret);
  });
});

describe.concurrent('speech stream faults', () => {
  const tts = (speech: FakeOpenAiSpeechServer): OpenAiTextToSpeech => new OpenAiTextToSpeech({ baseUrl: speech.url, model: 't', voices: ['alloy'], timeoutMs: 1500, idleTimeoutMs: IDLE_MS });

  async function speak(speech: FakeOpenAiSpeechServer): Promise<{ bytes: number; error: ProviderError | undefined }> {
    let bytes = 0;
    try {
      for await (const c of tts(speech).synthesize('Hello there.', 'alloy', new AbortController().signal)) bytes += c.samples.length * 2;
    } catch (error) {
      return { bytes, error: error as ProviderError };
    }
    return { bytes, error: undefined };
  }

  it('TTS: no headers → timeout; audio that stops mid-sentence → stalled; a cut → broken', async ({ speech }) => {
    speech.scriptSpeech(() => ({ hang: true }));
    expect((await speak(speech)).error?.publicDetail).toBe('speech synthesis did not answer in time');
    speech.scriptSpeech(() => ({ pcm: tone(500), stopAfterBytes: 4800 }));
    const stalled = await speak(speech);
    expect(stalled.bytes).toBe(4800);
    expect(stalled.error?.publicDetail).toBe('speech synthesis stopped sending mid-answer');
    speech.scriptSpeech(() => ({ pcm: tone(500), stopAfterBytes: 4800, then: 'destroy' }));
    expect((await speak(speech)).error?.publicDetail).toBe('the connection to speech synthesis broke mid-answer');
  });

  it('ASR: no answer → timeout; headers then silence → stalled; a 200 with bad JSON → malformed', async ({ speech }) => {
    const transcribe = async (): Promise<ProviderError> => {
      const stream = new OpenAiSpeechToText({ baseUrl: speech.url, model: 'w', timeoutMs: 1000 }).open();
      stream.write(new Int16Array(800));
      return (await stream.finish().catch((e: unknown) => e)) as ProviderError;
    };
    speech.scriptTranscription(() => ({ hang: true }));
    expect((await transcribe()).publicDetail).toBe('speech recognition did not answer in time');
    speech.scriptTranscription(() => ({ hang: true, afterHeaders: true }));
    expect((await transcribe()).publicDetail).toBe('speech recognition stopped sending mid-answer');
    speech.scriptTranscription(() => ({ status: 200, body: '{"text": ' }));
    expect((await transcribe()).publicDetail).toBe('speech recognition sent an answer that could not be read');
  });
});

describe('web search faults', () => {
  it('a search backend that stalls mid-body fails within its timeout, in our words', async () => {
    const server = createServer((req, res) => {
      if (req.url?.includes('q=ok')) return sendJson(res, 200, { results: [{ title: 't', url: 'https://x.example/', content: 'c' }] });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"results": [');
    });
    const origin = await listenOnLoopback(server);
    try {
      const search = new SearxngSearch(origin, { timeoutMs: IDLE_MS });
      expect(await search.search('ok', new AbortController().signal)).toEqual([{ title: 't', url: 'https://x.example/', snippet: 'c' }]);
      const error = (await search.search('stall', new AbortController().signal).catch((e: unknown) => e)) as ProviderError;
      expect(error.publicDetail).toBe('web search stopped sending mid-answer');
      await search.close();
    } finally {
      await closeServer(server);
    }
  });
});
