import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Koa from 'koa';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { ConfigError } from './config.ts';
import { createServer, type ParleyServer, type ServerOptions } from './create-server.ts';
import { say, sid, textStart } from './testing/conversation.ts';
import { startSession, WsTestClient } from './testing/ws-test-client.ts';
import { MemoryResumeStash } from '../session/resume/resume-stash.ts';
import type { LanguageModel, ModelEvent, ModelRequest } from '../session/providers/llm.ts';
import type { TextToSpeech } from '../session/providers/tts.ts';
import type { SpeechToText } from '../session/providers/asr.ts';
import { catalogOf } from '../session/providers/voices.ts';

/**
 * createServer, the server as a library: configuration by environment names through the same
 * schema, providers and stores handed in, listen/close, and mounting in a host's HTTP server or
 * Koa app beside the host's own routes and WebSocket endpoints.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  vi.unstubAllEnvs();
});

async function make(options: ServerOptions = {}): Promise<ParleyServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-api-'));
  const server = await createServer({ ...options, config: { DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: 0, ...options.config } });
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }), () => server.close());
  return server;
}

async function hostServer(handler: Parameters<typeof createHttpServer>[1]): Promise<{ http: Server; url: string }> {
  const http = createHttpServer(handler);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  // Runs last: Parley's sessions (upgraded sockets of this server) must drain first.
  cleanups.unshift(() => {
    http.closeAllConnections();
    return new Promise<void>((resolve) => http.close(() => resolve()));
  });
  return { http, url: `http://127.0.0.1:${(http.address() as AddressInfo).port}` };
}

/** A LanguageModel of our own: answers every user message in capitals. */
class Shouter implements LanguageModel {
  readonly name = 'shouter';
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const last = request.messages.at(-1);
    yield { type: 'text', delta: last?.role === 'user' ? last.content.toUpperCase() : 'HELLO' };
    yield { type: 'finish', reason: 'stop' };
  }
}

describe('createServer: configuration', () => {
  it('takes the environment names with plain values, checked by the same schema; the rest comes from the environment', async () => {
    vi.stubEnv('GREETING', 'Hi from the environment');
    vi.stubEnv('MAX_SESSIONS', '7');
    const server = await make({ config: { MAX_SESSIONS: 3, TRUST_PROXY: true, HOST: '127.0.0.1' } });
    expect(server.config).toMatchObject({ MAX_SESSIONS: 3, TRUST_PROXY: true, GREETING: 'Hi from the environment', PORT: 0 });
  });

  it('a bad value or an unknown name is a ConfigError naming it, before anything starts', async () => {
    await expect(createServer({ config: { PORT: 'eighty' } })).rejects.toThrow(ConfigError);
    await expect(createServer({ config: { PORT: 'eighty' } })).rejects.toThrow(/PORT: /);
    await expect(createServer({ config: { LLM_PROVIDER: 'openai' } })).rejects.toThrow(/LLM_BASE_URL: required when LLM_PROVIDER=openai/);
    await expect(createServer({ config: { PROT: 8080 } as never })).rejects.toThrow(/PROT: not a setting of this server/);
  });

  it('a given voice without the configured default voice: its first voice becomes the default; an explicit one it lacks is refused', async () => {
    const tts: TextToSpeech = {
      name: 'mine',
      voices: catalogOf([{ voice: 'robin', name: 'Robin', language: 'en-GB', gender: 'female' }]),
      async *synthesize() {},
    };
    const asr: SpeechToText = { name: 'none', open: () => ({ write() {}, finish: async () => '', abort() {} }) };
    const server = await make({ tts, asr });
    expect(server.config.DEFAULT_VOICE).toBe('robin');
    await expect(createServer({ tts, config: { DEFAULT_VOICE: 'slt', LOG_LEVEL: 'silent' } })).rejects.toThrow(/DEFAULT_VOICE: "slt" is not a voice of the given tts/);
  });
});

describe('createServer: its own port', () => {
  it('listen() serves HTTP and the WebSocket with the given model, logger and resume store; close() drains', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(String(chunk)), done()) }));
    const stash = new MemoryResumeStash(60_000);
    const server = await make({ llm: new Shouter(), logger, store: { stash } });
    const url = await server.listen(0, '127.0.0.1');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).toBe(url);
    expect(lines.some((line) => JSON.parse(line).msg === 'listening')).toBe(true);

    const { key } = await server.keys.create('acme');
    const { client } = await startSession(`${url.replace('http', 'ws')}/ws`, { ...textStart(sid(), { greeting: false }), api_key: key });
    expect((await say(client, 'quiet please')).deltas).toBe('QUIET PLEASE');
    client.ws.close(4000, 'gone');
    await client.waitClose();
    await vi.waitFor(() => expect(stash.size).toBe(1));

    const other = await startSession(`${url.replace('http', 'ws')}/ws`, { ...textStart(sid(), { greeting: false }), api_key: key });
    const closing = server.close();
    const closed = await other.client.waitClose();
    expect(closed.code).toBe(1012);
    expect(other.client.all('error').map((e) => e.code)).toEqual(['server_restarting']);
    await closing;
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});

describe('createServer: mounted in a host application', () => {
  it('in a plain Node HTTP server: the host routes what it delegates, and its own WebSocket endpoint keeps working', async () => {
    const parley = await make({ llm: new Shouter() });
    const { http, url } = await hostServer((req, res) => {
      if (req.url === '/mine') return void res.end('host route');
      parley.handleRequest(req, res);
    });
    const hostSockets = new WebSocketServer({ noServer: true });
    cleanups.push(() => void hostSockets.close());
    http.on('upgrade', (req, socket, head) => {
      if (parley.handleUpgrade(req, socket, head)) return;
      hostSockets.handleUpgrade(req, socket, head, (ws) => ws.send('host socket'));
    });

    expect(await (await fetch(`${url}/mine`)).text()).toBe('host route');
    expect(await (await fetch(`${url}/healthz`)).json()).toMatchObject({ status: 'ok' });
    const missing = await fetch(`${url}/nowhere`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'not_found' });

    const { key } = await parley.keys.create('acme');
    const { client } = await startSession(`${url.replace('http', 'ws')}/ws`, { ...textStart(sid(), { greeting: false }), api_key: key });
    expect((await say(client, 'mounted')).deltas).toBe('MOUNTED');
    const hostWs = new WebSocket(`${url.replace('http', 'ws')}/host-ws`);
    expect(await new Promise((resolve) => hostWs.once('message', (data) => resolve(String(data))))).toBe('host socket');
    hostWs.close();

    // close() drains Parley's sessions and leaves the host's server serving.
    const closing = parley.close();
    expect((await client.waitClose()).code).toBe(1012);
    await closing;
    expect(await (await fetch(`${url}/mine`)).text()).toBe('host route');
  });

  it('in a Koa app: our routes as middleware, everything else passes on to the host; no demo page at the host root', async () => {
    const parley = await make({ llm: new Shouter() });
    const app = new Koa();
    app.use(parley.middleware());
    app.use((ctx) => {
      ctx.body = `host: ${ctx.path}`;
    });
    const { http, url } = await hostServer(app.callback());
    http.on('upgrade', (req, socket, head) => {
      if (!parley.handleUpgrade(req, socket, head)) socket.destroy();
    });

    expect(await (await fetch(`${url}/`)).text()).toBe('host: /');
    expect(await (await fetch(`${url}/anything`)).text()).toBe('host: /anything');
    expect(await (await fetch(`${url}/healthz`)).json()).toMatchObject({ status: 'ok', sessions: 0 });
    const script = await fetch(`${url}/client.js`);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(await script.text()).toMatch(/RealtimeClient/);

    const { key } = await parley.keys.create('acme');
    const minted = await fetch(`${url}/api/v1/session-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 'koa-call-1' }),
    });
    expect(minted.status).toBe(201);
    const { api_key: scoped } = (await minted.json()) as { api_key: string };
    const { client } = await startSession(`${url.replace('http', 'ws')}/ws`, { ...textStart('koa-call-1', { greeting: false }), api_key: scoped });
    expect((await say(client, 'from koa')).deltas).toBe('FROM KOA');
    client.assertProtocol();
    const stray = await WsTestClient.open(`${url.replace('http', 'ws')}/elsewhere`).catch((error: Error) => error);
    expect(stray).toBeInstanceOf(Error);
  });
});
