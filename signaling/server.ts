import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LanguageModel } from '../session/providers/llm.ts';
import type { Config } from './config.ts';
import type { ServerContext } from './context.ts';
import { createHttpApp } from './http/app.ts';
import { loadOrCreateSecret } from './keys/scoped-key.ts';
import { createLogger, type Logger } from './log.ts';
import { createLanguageModel } from './providers.ts';
import { SessionRegistry } from './session-registry.ts';
import { attachWebSocketServer } from './ws/ws-server.ts';
import { createVoiceProviders } from './voice-providers.ts';
import type { VoiceProviders } from './context.ts';
import { catalogOf, FLITE_VOICES } from '../session/providers/voices.ts';
import { SearxngSearch } from '../session/providers/searxng-search.ts';
import { createStores, type Stores } from './stores/stores.ts';
import { drainSessions, keepWrittenThrough } from './drain.ts';
import { createObservability } from './observability/observability.ts';
import { storeCheck } from './observability/readiness.ts';
import { observeLanguageModel, observeSpeechToText, observeTextToSpeech, observeWebSearch } from './observability/provider-telemetry.ts';
import { FailedAttempts } from './failed-attempts.ts';
import { ServerUsage } from './usage/server-usage.ts';

export interface RunningServer {
  /** http://host:port */
  url: string;
  port: number;
  context: ServerContext;
  /**
   * Graceful drain (drain.ts): refuse new sessions, stash every live conversation, tell it
   * `server_restarting` and close it (1012), then stop listening and close the stores.
   */
  stop(): Promise<void>;
}

export interface ServerOverrides {
  llm?: LanguageModel;
  log?: Logger;
  voice?: VoiceProviders;
  /** Built by createStores() from the configuration when absent; the server closes them on stop. */
  stores?: Stores;
  /** 'off': no measurement at all (the benchmark's baseline for what observability costs). */
  observability?: 'off';
}

/** Starts HTTP and WebSocket on one port. */
export async function startServer(config: Config, overrides: ServerOverrides = {}): Promise<RunningServer> {
  const log = overrides.log ?? createLogger(config.LOG_LEVEL);
  const observability = createObservability(config, overrides.observability !== 'off');
  const observed = observability.active;
  const stores = overrides.stores ?? (await createStores(config, log));
  for (const dependency of stores.checks) observability.readiness.add(dependency.name, storeCheck(dependency));
  const providers = overrides.voice ?? (await createVoiceProviders(config, log));
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
    attempts: new FailedAttempts(config, log, stores.rateLimiter('auth-fail', FailedAttempts.limiterOptions(config))),
    usage: new ServerUsage(stores, config, log),
    draining: false,
    observability,
  };
  const http = createServer(createHttpApp(context).callback());
  const wss = attachWebSocketServer(http, context);
  const stopUpkeep = keepWrittenThrough(context);
  await listen(http, config.PORT, config.HOST);
  const { port } = http.address() as AddressInfo;
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  log.info({ host: config.HOST, port, llm: context.llm.name }, 'listening');

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      await drainSessions(context, () => wss.closing());
      wss.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
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

  return { url: `http://${host}:${port}`, port, context, stop };
}

function listen(http: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
}
