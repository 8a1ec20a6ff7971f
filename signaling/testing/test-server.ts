import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config.ts';
import { startServer, type RunningServer, type ServerOverrides } from '../server.ts';
import { mintScopedKey } from '../keys/scoped-key.ts';
import { Arrivals } from '../../media/testing/arrivals.ts';

export interface TestServer {
  server: RunningServer;
  url: string;
  wsUrl: string;
  /** A persistent key of account `acme`. */
  key: string;
  keyId: string;
  dataDir: string;
  /** A scoped key for this session; `mintedAt` (default now) lets a test mint one that has already expired. */
  scopedKey(sessionId: string, opts?: { ttlS?: number; account?: string; mintedAt?: number }): string;
  /** Resolves once the server stashed the conversation of this resume token (after a drop). */
  whenStashed(token: string): Promise<void>;
  /** Resolves once exactly `count` sessions are registered (on registration or release, no polling). */
  whenSessions(count: number): Promise<void>;
  stop(): Promise<void>;
}

/** The product's default: recognisers loaded before the server listens, as timed audio tests need. */
export const WARM_RECOGNISERS = { ASR_WARM_PROCESSES: '2' } as const;
/** The product's default: media worker threads loaded before the server listens, so a first call's offer is answered without their start. */
export const WARM_MEDIA_WORKERS = { WEBRTC_WARM_WORKERS: '1' } as const;

/** A real server on an ephemeral loopback port with its own data directory. */
export async function startTestServer(env: Record<string, string> = {}, overrides: ServerOverrides = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-test-'));
  // Tests ask for the dev key route, as the demo's documented start command does. Every test
  // client comes from 127.0.0.1, so the per-address failure limit is raised out of their way
  // (failed-attempts.test.ts sets its own). No closing notice ahead of time unless a test asks
  // (CLOSING_NOTICE_S): a stop() with sessions still open would otherwise hold them for the
  // drain's notice (2.5 s with the defaults). No recogniser is loaded ahead of use
  // (ASR_WARM_PROCESSES=0): most tests never speak, and two warm ones cost each start ~0.6 s;
  // a voice test's first utterance starts one. Files that time audio ask for WARM_RECOGNISERS.
  // Likewise no media worker thread starts before listening (WEBRTC_WARM_WORKERS=0): most files
  // place no WebRTC call; the first call of one that does starts them, and the WebRTC files ask
  // for WARM_MEDIA_WORKERS (a thread's start is ~0.3 s quiet, seconds on a loaded machine).
  const config = loadConfig({
    HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', LOCAL_LLM_WORD_DELAY_MS: '0', DEV_ROUTES: 'on', AUTH_FAILURES_PER_ADDRESS: '10000', CLOSING_NOTICE_S: '0', ASR_WARM_PROCESSES: '0', WEBRTC_WARM_WORKERS: '0',
    ...env,
  });
  const server = await startServer(config, overrides);
  const created = await server.context.stores.keys.create('acme');
  // Drops land in the stash and sessions come and go asynchronously: tests wait for these events
  // (an in-process stash saves only on a drop; write-through needs a shared one).
  const stashed = new Set<string>();
  const waiting = new Map<string, () => void>();
  const stash = server.context.stores.stash;
  const save = stash.save.bind(stash);
  stash.save = async (token, entry) => {
    const result = await save(token, entry);
    if (result === 'saved') {
      stashed.add(token);
      waiting.get(token)?.();
    }
    return result;
  };
  const sessions = server.context.sessions;
  const changed = new Arrivals();
  const tryAdd = sessions.tryAdd.bind(sessions);
  const remove = sessions.remove.bind(sessions);
  sessions.tryAdd = (session) => {
    const added = tryAdd(session);
    changed.notify();
    return added;
  };
  sessions.remove = (session) => {
    remove(session);
    changed.notify();
  };
  return {
    server,
    url: server.url,
    wsUrl: `${server.url.replace(/^http/, 'ws')}/ws`,
    key: created.key,
    keyId: created.id,
    dataDir,
    scopedKey: (sessionId, opts = {}) =>
      mintScopedKey(server.context.secret, {
        account: opts.account ?? 'acme',
        sessionId,
        keyId: created.id,
        ttlS: opts.ttlS ?? config.SCOPED_KEY_TTL_S,
        ...(opts.mintedAt === undefined ? {} : { now: opts.mintedAt }),
      }).apiKey,
    whenStashed: (token) => (stashed.has(token) ? Promise.resolve() : new Promise((resolve) => waiting.set(token, resolve))),
    whenSessions: (count) => changed.until(() => (sessions.size === count ? true : undefined), 10_000, () => `${count} registered sessions (${sessions.size} now)`).then(() => undefined),
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
