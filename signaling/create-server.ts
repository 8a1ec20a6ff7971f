import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { VadFactory } from '../media/vad.ts';
import type { SpeechToText } from '../session/providers/asr.ts';
import type { LanguageModel } from '../session/providers/llm.ts';
import type { TextToSpeech } from '../session/providers/tts.ts';
import { ServerToolSet, type ServerTool } from '../session/tools/server-tool.ts';
import { ConfigError, ConfigSchema, loadConfig, type Config } from './config.ts';
import type { KeyStore } from './keys/key-store.ts';
import { createLogger, type Logger } from './log.ts';
import { openServer } from './server.ts';
import { createStores, type Stores } from './stores/stores.ts';
import { createVoiceProviders } from './voice-providers.ts';
import { warmMediaWorkers } from './webrtc/media-workers.ts';
import { stopSileroThread } from '../media/silero-thread.ts';

/** The environment's keys (`PORT`, `DATA_DIR`, …) with plain values; checked by the same schema. */
export type ConfigInput = { [K in keyof typeof ConfigSchema.shape]?: string | number | boolean };

/** A Koa middleware, typed by what it needs, so a consumer needs no Koa types to mount it. */
export type KoaMiddleware = (ctx: { req: IncomingMessage; res: ServerResponse }, next: () => Promise<unknown>) => Promise<void>;

export interface ServerOptions {
  /** Settings by environment name; anything not given is read from `process.env`, then defaulted. */
  config?: ConfigInput;
  /** The model; default from LLM_PROVIDER. */
  llm?: LanguageModel;
  /** The recogniser; default from ASR_PROVIDER. */
  asr?: SpeechToText;
  /** The voice; default from TTS_PROVIDER. */
  tts?: TextToSpeech;
  /** Makes one voice-activity detector per voice session; default from VAD_PROVIDER (Silero). */
  vad?: VadFactory;
  /** Tools the server runs itself, offered to the model in every session (`defineTool`). */
  tools?: readonly ServerTool[];
  /**
   * Stores to use instead of the configured ones (PostgreSQL at DATABASE_URL or SQLite in
   * DATA_DIR for keys; Redis at REDIS_URL or memory for the resume stash): yours are not closed.
   */
  store?: Partial<Pick<Stores, 'keys' | 'stash'>>;
  /** A pino logger; default JSON lines on stdout at LOG_LEVEL. */
  logger?: Logger;
}

export interface ParleyServer {
  readonly config: Readonly<Config>;
  /** The persistent keys (`parley keys`): create, list, revoke, lookup (each resolves). */
  readonly keys: KeyStore;
  /** http://host:port once listen() resolved. */
  readonly url: string | undefined;
  /** Serves HTTP and the WebSocket on a server of its own; defaults PORT and HOST. Resolves with the URL. */
  listen(port?: number, host?: string): Promise<string>;
  /** Parley's HTTP routes for a host's `http.createServer(...)` (JSON 404 for anything else). */
  handleRequest(req: IncomingMessage, res: ServerResponse): void;
  /** Parley's HTTP routes as Koa middleware; other requests pass on. The demo page only with `demoPage`. */
  middleware(options?: { demoPage?: boolean }): KoaMiddleware;
  /** For the host's `upgrade` event: true when the request was ours (/ws), else untouched. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Drains: live sessions get `server_restarting` (close 1012), then everything stops. */
  close(): Promise<void>;
}

/**
 * A Parley server as a library: the same server `parley start` runs, with your own providers and
 * tools. Throws ConfigError for a bad setting, TypeError for a bad tool definition, and
 * MediaWorkerStartError when a WebRTC media worker thread cannot load (WEBRTC_WARM_WORKERS).
 */
export async function createServer(options: ServerOptions = {}): Promise<ParleyServer> {
  const config = loadConfig({ ...process.env, ...asEnvironment(options.config ?? {}) });
  const tools = new ServerToolSet(options.tools);
  const log = options.logger ?? createLogger(config.LOG_LEVEL);
  const given = { ...(options.asr ? { asr: options.asr } : {}), ...(options.tts ? { tts: options.tts } : {}), ...(options.vad ? { vad: options.vad } : {}) };
  const voice = await createVoiceProviders(config, log, given, () => warmMediaWorkers(config, log));
  if (voice.ok && options.tts && !voice.tts.voices.find(config.DEFAULT_VOICE)) {
    const first = voice.tts.voices.list()[0];
    if (!first || (options.config?.DEFAULT_VOICE ?? process.env.DEFAULT_VOICE)) {
      throw new ConfigError(`invalid configuration:\n  DEFAULT_VOICE: "${config.DEFAULT_VOICE}" is not a voice of the given tts (${voice.tts.name})`);
    }
    config.DEFAULT_VOICE = first.voice;
  }
  const configured = await createStores(config, log);
  const stores: Stores = { ...configured, ...options.store };
  const hosted = await openServer(config, { stores, ...(options.llm ? { llm: options.llm } : {}), log, voice, tools, mediaWorkersWarmed: true }).catch(async (error: unknown) => {
    await configured.close();
    if (voice.ok) await Promise.all([voice.tts.close?.(), voice.stt.close?.()]);
    throw error;
  });
  let url: string | undefined;
  return {
    config,
    keys: hosted.context.stores.keys,
    get url() {
      return url;
    },
    async listen(port = config.PORT, host = config.HOST) {
      ({ url } = await hosted.listen(port, host));
      return url;
    },
    handleRequest: hosted.handleRequest,
    middleware: (mount = {}) => hosted.middleware({ demoPage: mount.demoPage ?? false }) as unknown as KoaMiddleware,
    handleUpgrade: hosted.handleUpgrade,
    async close() {
      await hosted.close();
      // The process's Silero thread would keep a host's process alive (its port stays referenced);
      // the next voice session of any server starts a new one.
      if (voice.ok && voice.vad.provider === 'silero') await stopSileroThread();
    },
  };
}

function asEnvironment(config: ConfigInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(config)) {
    if (!Object.hasOwn(ConfigSchema.shape, key)) throw new ConfigError(`invalid configuration:\n  ${key}: not a setting of this server`);
    if (value !== undefined) env[key] = String(value);
  }
  return env;
}
