import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { say } from './testing/conversation.ts';
import { spawnServerProcess } from './testing/server-process.ts';
import { startSession } from './testing/ws-test-client.ts';

/**
 * `npm start` on a machine without Debian's pocketsphinx model: the server starts, says in one
 * line why voice is off and what to install, /healthz tells the demo page, and text works. The
 * model folder is hidden by an empty directory mounted over it in a mount namespace of the
 * server's own (root only; the machine itself is untouched).
 */
const canHide = process.getuid?.() === 0 && spawnSync('unshare', ['-m', 'true']).status === 0;
if (!canHide) console.warn('!! signaling/main.test.ts SKIPPED: hiding the pocketsphinx model needs root and unshare(1)');

describe.skipIf(!canHide)('npm start without the offline recogniser', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-main-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('prints one line naming the packages, reports voice off at /healthz, and holds a text turn', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'parley-no-model-'));
    const hidden = ['unshare', '-m', 'sh', '-c', 'mount --bind "$0" /usr/share/pocketsphinx && exec "$@"', empty];
    const server = await spawnServerProcess([...hidden, process.execPath, '--import', 'tsx', 'signaling/main.ts'], {
      // DEV_ROUTES=on: the Quick start's command, so the demo's dev key below is minted.
      env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', DEV_ROUTES: 'on' },
    });
    try {
      await server.untilStdout(/voice is off/, 5000);
      const lines = server.stdout().trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[1]).toMatch(/^parley: voice is off, text works: .*apt-get install pocketsphinx pocketsphinx-en-us.*ASR_PROVIDER=openai/);
      const health = (await (await fetch(`${server.url}/healthz`)).json()) as { voice: { available: boolean; detail?: string } };
      expect(health.voice.available).toBe(false);
      expect(health.voice.detail).toContain('pocketsphinx');
      // Text works: the demo's dev key, one turn.
      const minted = await fetch(`${server.url}/dev/session-key`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"session_id":"main-1"}' });
      const { api_key } = (await minted.json()) as { api_key: string };
      const { client } = await startSession(`${server.url.replace('http', 'ws')}/ws`, { session_id: 'main-1', api_key, mode: { kind: 'service', modality: 'text', greeting: false } });
      expect((await say(client, 'what is 6 times 7')).utterance?.text).toContain('42');
      client.close();
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
