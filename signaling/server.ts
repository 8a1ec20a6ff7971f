import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LanguageModel } from '../session/providers/llm.ts';
import type { Config } from './config.ts';
import type { ServerContext } from './context.ts';
import { createHttpApp } from './http/app.ts';
import { KeyStore } from './keys/key-store.ts';
import { loadOrCreateSecret } from './keys/scoped-key.ts';
import { createLogger, type Logger } from './log.ts';
import { createLanguageModel } from './providers.ts';
import { SessionRegistry } from './session-registry.ts';
import { attachWebSocketServer } from './ws/ws-server.ts';
import { createVoiceProviders } from './voice-providers.ts';
import type { VoiceProviders } from './context.ts';
import { catalogOf, FLITE_VOICES } from '../session/providers/voices.ts';
import { SearxngSearch } from '../session/providers/searxng-search.ts';
import { MemoryResumeStash, type ResumeStash } from '../session/resume/resume-stash.ts';
import { OneShotStore } from './one-shot-store.ts';
import { FailedAttempts } from './failed-attempts.ts';
import { instrumentPacing } from './observability/pacing.ts';

export interface RunningServer {
  /** http://host:port */
  url: string;
  port: number;
  context: ServerContext;
  /**
   * Graceful drain: refuse new sessions, tell every live session `server_restarting`, close
   * them (1012), then stop listening. Resolves within DRAIN_TIMEOUT_MS.
   */
  stop(): Promise<void>;
}

export interface ServerOverrides {
  llm?: LanguageModel;
  log?: Logger;
  voice?: VoiceProviders;
  stash?: ResumeStash;
}

/** Starts HTTP and WebSocket on one port. */
export async function startServer(config: Config, overrides: ServerOverrides = {}): Promise<RunningServer> {
  instrumentPacing();
  const log = overrides.log ?? createLogger(config.LOG_LEVEL);
  const keys = KeyStore.open(config.DATA_DIR);
  const voice = overrides.voice ?? (await createVoiceProviders(config, log));
  const context: ServerContext = {
    config,
    keys,
    secret: loadOrCreateSecret(config.DATA_DIR, config.SCOPED_KEY_SECRET),
    log,
    llm: overrides.llm ?? createLanguageModel(config, log),
    voices: voice.ok ? voice.tts.voices : catalogOf(FLITE_VOICES),
    sessions: new SessionRegistry(config.MAX_SESSIONS),
    voice,
    search: config.SEARCH_URL ? new SearxngSearch(config.SEARCH_URL, { timeoutMs: config.SEARCH_TIMEOUT_MS, connections: config.PROVIDER_CONNECTIONS }) : undefined,
    stash: overrides.stash ?? new MemoryResumeStash(),
    oneShots: new OneShotStore(config.DATA_DIR, config.REPORTS_MAX_BYTES),
    attempts: new FailedAttempts(config, log),
    draining: false,
  };
  const http = createServer(createHttpApp(context).callback());
  const wss = attachWebSocketServer(http, context);
  await listen(http, config.PORT, config.HOST);
  const { port } = http.address() as AddressInfo;
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  log.info({ host: config.HOST, port, llm: context.llm.name }, 'listening');

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      context.draining = true;
      const live = context.sessions.all();
      log.info({ sessions: live.length }, 'draining');
      for (const session of live) session.shutdown('server_restarting');
      // Wait for the close handshakes too: terminating a socket whose error frame and close
      // frame are still queued behind a backlog would cut it with 1006 and no reason.
      await waitUntil(() => context.sessions.size === 0 && wss.closing() === 0, config.DRAIN_TIMEOUT_MS);
      wss.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      keys.close();
      if (voice.ok) await Promise.all([voice.tts.close?.(), voice.stt.close?.()]);
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

async function waitUntil(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}
