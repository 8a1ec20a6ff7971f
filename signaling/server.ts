import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import type { LanguageModel } from '../session/providers/llm.ts';
import { ServerToolSet } from '../session/tools/server-tool.ts';
import type { Config } from './config.ts';
import type { ServerContext, VoiceProviders } from './context.ts';
import { createHttpApp, createMountedRoutes } from './http/app.ts';
import { loadOrCreateSecret } from './keys/scoped-key.ts';
import { createLogger, type Logger } from './log.ts';
import { createLanguageModel } from './providers.ts';
import { SessionRegistry } from './session-registry.ts';
import { openStores, type ServerStores } from './stores.ts';
import { createWebSocketEndpoint, guardSocket, refuseUpgrade } from './ws/ws-server.ts';
import { createVoiceProviders } from './voice-providers.ts';
import { catalogOf, FLITE_VOICES } from '../session/providers/voices.ts';
import { SearxngSearch } from '../session/providers/searxng-search.ts';
import { FailedAttempts } from './failed-attempts.ts';

export interface ServerOverrides extends Partial<ServerStores> {
  llm?: LanguageModel;
  log?: Logger;
  voice?: VoiceProviders;
  tools?: ServerToolSet;
}

/** A server built but not necessarily listening: its handlers can be mounted in a host application. */
export interface HostedServer {
  context: ServerContext;
  handleRequest(req: IncomingMessage, res: ServerResponse): void;
  /** Our routes as Koa middleware; `demoPage` serves the demo at `/`. */
  middleware(options: { demoPage: boolean }): Koa.Middleware;
  /** True when the request was ours (/ws); anything else is left to the caller. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Serves on a server of its own. */
  listen(port: number, host: string): Promise<{ url: string; port: number }>;
  /**
   * Graceful drain: refuse new sessions, tell every live session `server_restarting`, close
   * them (1012), then stop. Resolves within DRAIN_TIMEOUT_MS. A host's own server stays open.
   */
  close(): Promise<void>;
}

export interface RunningServer {
  /** http://host:port */
  url: string;
  port: number;
  context: ServerContext;
  /** close() of the HostedServer. */
  stop(): Promise<void>;
}

/** Builds everything a server needs; nothing listens yet. */
export async function openServer(config: Config, overrides: ServerOverrides = {}): Promise<HostedServer> {
  const log = overrides.log ?? createLogger(config.LOG_LEVEL);
  const stores = openStores(config, overrides);
  const voice = overrides.voice ?? (await createVoiceProviders(config, log));
  const context: ServerContext = {
    config,
    ...stores,
    secret: loadOrCreateSecret(config.DATA_DIR, config.SCOPED_KEY_SECRET),
    log,
    llm: overrides.llm ?? createLanguageModel(config, log),
    voices: voice.ok ? voice.tts.voices : catalogOf(FLITE_VOICES),
    sessions: new SessionRegistry(config.MAX_SESSIONS),
    voice,
    search: config.SEARCH_URL ? new SearxngSearch(config.SEARCH_URL, { timeoutMs: config.SEARCH_TIMEOUT_MS, connections: config.PROVIDER_CONNECTIONS }) : undefined,
    serverTools: overrides.tools ?? new ServerToolSet(),
    attempts: new FailedAttempts(config, log),
    draining: false,
  };
  const handleRequest = createHttpApp(context).callback();
  const ws = createWebSocketEndpoint(context);
  let own: Server | undefined;

  const listen = async (port: number, host: string): Promise<{ url: string; port: number }> => {
    if (own) throw new Error('the server is already listening');
    own = createServer(handleRequest);
    own.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (ws.handleUpgrade(req, socket, head)) return;
      guardSocket(socket, context);
      refuseUpgrade(socket, { status: 404, code: 'not_found', detail: 'the conversation endpoint is /ws' });
    });
    try {
      await listenOn(own, port, host);
    } catch (error) {
      own = undefined;
      throw error;
    }
    const bound = (own.address() as AddressInfo).port;
    const shown = host.includes(':') ? `[${host}]` : host;
    log.info({ host, port: bound, llm: context.llm.name }, 'listening');
    return { url: `http://${shown}:${bound}`, port: bound };
  };

  let stopping: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (stopping ??= (async () => {
      context.draining = true;
      const live = context.sessions.all();
      log.info({ sessions: live.length }, 'draining');
      for (const session of live) session.shutdown('server_restarting');
      // Wait for the close handshakes too: terminating a socket whose error frame and close
      // frame are still queued behind a backlog would cut it with 1006 and no reason.
      await waitUntil(() => context.sessions.size === 0 && ws.closing() === 0, config.DRAIN_TIMEOUT_MS);
      ws.close();
      if (own) {
        own.closeAllConnections();
        await new Promise<void>((resolve) => own?.close(() => resolve()));
      }
      context.keys.close();
      if (voice.ok) await Promise.all([voice.tts.close?.(), voice.stt.close?.()]);
      log.info('stopped');
    })());

  return {
    context,
    handleRequest,
    middleware: (options) => createMountedRoutes(context, options),
    handleUpgrade: ws.handleUpgrade,
    listen,
    close,
  };
}

/** Starts HTTP and WebSocket on one port (config HOST and PORT). */
export async function startServer(config: Config, overrides: ServerOverrides = {}): Promise<RunningServer> {
  const hosted = await openServer(config, overrides);
  try {
    const { url, port } = await hosted.listen(config.PORT, config.HOST);
    return { url, port, context: hosted.context, stop: hosted.close };
  } catch (error) {
    await hosted.close();
    throw error;
  }
}

function listenOn(http: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
}

async function waitUntil(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}
