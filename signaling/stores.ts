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

/**
 * The one place stores are chosen: a store given by the caller (createServer's `store`, a test)
 * is used as it is, every other one is built from configuration.
 */
export function openStores(config: Config, given: Partial<ServerStores> = {}): ServerStores {
  return {
    keys: given.keys ?? KeyStore.open(config.DATA_DIR),
    stash: given.stash ?? new MemoryResumeStash(),
    oneShots: given.oneShots ?? new OneShotStore(config.DATA_DIR),
  };
}
