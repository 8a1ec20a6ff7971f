import type { Config } from './config.ts';
import type { KeyStore } from './keys/key-store.ts';
import type { Logger } from './log.ts';
import type { LanguageModel } from '../session/providers/llm.ts';
import type { VoiceCatalog } from '../session/providers/voices.ts';
import type { SessionRegistry } from './session-registry.ts';

/** What the HTTP routes and the WebSocket layer share; built once in server.ts. */
export interface ServerContext {
  config: Config;
  keys: KeyStore;
  secret: Buffer;
  log: Logger;
  llm: LanguageModel;
  voices: VoiceCatalog;
  sessions: SessionRegistry;
  /** True once SIGTERM (or stop()) began draining: no new sessions. */
  draining: boolean;
}
