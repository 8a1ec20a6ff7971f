import { MemoryResumeStash, type ResumeStash } from '../session/resume/resume-stash.ts';
import type { Config } from './config.ts';
import { KeyStore } from './keys/key-store.ts';
import { OneShotStore } from './one-shot-store.ts';

/** What a server keeps beyond a session: keys, stashed conversations, one-shot reports. */
export interface ServerStores {
  keys: KeyStore;
  /** Dropped conversations waiting for their resume token. */
  stash: ResumeStash;
  oneShots: OneShotStore;
}

/** The persistent keys as configured: the server and `parley keys` open the same store. */
export function openKeyStore(config: Config): KeyStore {
  return KeyStore.open(config.DATA_DIR);
}

/**
 * The one place stores are chosen: a store given by the caller (createServer's `store`, a test)
 * is used as it is, every other one is built from configuration.
 */
export function openStores(config: Config, given: Partial<ServerStores> = {}): ServerStores {
  return {
    keys: given.keys ?? openKeyStore(config),
    stash: given.stash ?? new MemoryResumeStash(),
    oneShots: given.oneShots ?? new OneShotStore(config.DATA_DIR, config.REPORTS_MAX_BYTES),
  };
}
