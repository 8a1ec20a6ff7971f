import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config.ts';
import { startServer, type RunningServer, type ServerOverrides } from '../server.ts';
import { mintScopedKey } from '../keys/scoped-key.ts';

export interface TestServer {
  server: RunningServer;
  url: string;
  wsUrl: string;
  /** A persistent key of account `acme`. */
  key: string;
  keyId: string;
  dataDir: string;
  scopedKey(sessionId: string, opts?: { ttlS?: number; account?: string }): string;
  /** Resolves once the server stashed the conversation of this resume token (after a drop). */
  whenStashed(token: string): Promise<void>;
  stop(): Promise<void>;
}

/** A real server on an ephemeral loopback port with its own data directory. */
export async function startTestServer(env: Record<string, string> = {}, overrides: ServerOverrides = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-test-'));
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', LOCAL_LLM_WORD_DELAY_MS: '0', ...env });
  const server = await startServer(config, overrides);
  const created = server.context.keys.create('acme');
  const stashed = new Set<string>();
  const waiting = new Map<string, () => void>();
  const stash = server.context.stash;
  const put = stash.put.bind(stash);
  stash.put = async (token, entry, ttlMs) => {
    await put(token, entry, ttlMs);
    stashed.add(token);
    waiting.get(token)?.();
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
      }).apiKey,
    whenStashed: (token) => (stashed.has(token) ? Promise.resolve() : new Promise((resolve) => waiting.set(token, resolve))),
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
