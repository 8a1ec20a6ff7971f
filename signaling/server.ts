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
import { createWebSocketEndpoint, guardSocket, refuseUpgrade } from './ws/ws-server.ts';
import { createVoiceProviders, settled } from './voice-providers.ts';
import { warmMediaWorkers } from './webrtc/media-workers.ts';
import { catalogOf, FLITE_VOICES } from '../session/providers/voices.ts';
import { SearxngSearch } from '../session/providers/searxng-search.ts';
import { createStores, type Stores } from './stores/stores.ts';
import { drainSessions, keepWrittenThrough } from './drain.ts';
import { createObservability } from './observability/observability.ts';
import { storeCheck } from './observability/readiness.ts';
import { observeLanguageModel, observeSpeechToText, observeTextToSpeech, observeWebSearch } from './observability/provider-telemetry.ts';
import { FailedAttempts } from './failed-attempts.ts';
import { ServerUsage } from './usage/server-usage.ts';

export interface ServerOverrides {
  llm?: LanguageModel;
  log?: Logger;
  voice?: VoiceProviders;
  tools?: ServerToolSet;
  /** Built by createStores() from the configuration when absent; the server closes them on stop. */
  stores?: Stores;
  /** 'off': no measurement at all (the benchmark's baseline for what observability costs). */
  observability?: 'off';
  /** The media workers were warmed with the given voice providers (createServer): not again. */
  mediaWorkersWarmed?: boolean;
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
   * Graceful drain (drain.ts): refuse new sessions, stash every live conversation, tell it
   * `server_restarting` and close it (1012), then stop and close the stores. Resolves within
   * DRAIN_TIMEOUT_MS. A host's own server stays open.
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
  const observability = createObservability(config, overrides.observability !== 'off');
  const observed = observability.active;
  // WebRTC calls need voice: only then are the media workers started before anything listens,
  // while the stores open (voice given) or alongside the recognisers (createVoiceProviders).
  const warmMedia = (): Promise<void> => warmMediaWorkers(config, log);
  const media = overrides.voice?.ok && !overrides.mediaWorkersWarmed ? settled(warmMedia()) : undefined;
  const stores = overrides.stores ?? (await createStores(config, log));
  const failed = async (error: unknown): Promise<never> => {
    if (!overrides.stores) await stores.close();
    throw error;
  };
  for (const dependency of stores.checks) observability.readiness.add(dependency.name, storeCheck(dependency));
  const providers = overrides.voice ?? (await createVoiceProviders(config, log, {}, warmMedia).catch(failed));
  const warmed = await media;
  if (warmed?.status === 'rejected') await failed(warmed.reason);
  // Every provider call is timed and traced (provider-telemetry.ts); the session sees the same ports.
  const voice: VoiceProviders = providers.ok && observed
    ? { ...providers, tts: observeTextToSpeech(observability, providers.tts), stt: observeSpeechToText(observability, providers.stt) }
    : providers;
  const llm = overrides.llm ?? createLanguageModel(config, log);
  const search = config.SEARCH_URL ? new SearxngSearch(config.SEARCH_URL, { timeoutMs: config.SEARCH_TIMEOUT_MS, connections: config.PROVIDER_CONNECTIONS }) : undefined;
  const context: ServerContext = {
    config,
    stores,
    secret: loadOrCreateSecret(config.DATA_DIR, config.SCOPED_KEY_SECRET),
    log,
    llm: observed ? observeLanguageModel(observability, llm) : llm,
    voices: voice.ok ? voice.tts.voices : catalogOf(FLITE_VOICES),
    sessions: new SessionRegistry(config.MAX_SESSIONS),
    voice,
    search: search && observed ? observeWebSearch(observability, search) : search,
    serverTools: overrides.tools ?? new ServerToolSet(),
    attempts: new FailedAttempts(config, log, stores.rateLimiter('auth-fail', FailedAttempts.limiterOptions(config))),
    usage: new ServerUsage(stores, config, log),
    draining: false,
    observability,
  };
  const handleRequest = createHttpApp(context).callback();
  const ws = createWebSocketEndpoint(context);
  const stopUpkeep = keepWrittenThrough(context);
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
      await drainSessions(context, () => ws.closing());
      ws.close();
      if (own) {
        own.closeAllConnections();
        await new Promise<void>((resolve) => own?.close(() => resolve()));
      }
      // Sockets cut at the deadline stash their conversations too.
      await context.sessions.writesSettled();
      stopUpkeep();
      // The turns metered up to the close reach the ledger before its database closes.
      await context.usage.writer.flush();
      await stores.close();
      if (voice.ok) await Promise.all([voice.tts.close?.(), voice.stt.close?.()]);
      await observability.tracing.shutdown();
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
