import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { say } from './testing/conversation.ts';
import { startSession } from './testing/ws-test-client.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * `npm start` on a machine without Debian's pocketsphinx (PATH without it): the server starts,
 * says in one line why voice is off and what to install, and /healthz tells the demo page.
 */
describe('npm start without the offline recogniser', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-main-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('prints one line naming the packages, serves text, and reports voice off at /healthz', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'signaling/main.ts'], {
      cwd: ROOT,
      env: { PATH: '/nonexistent', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let stdout = '';
    child.stdout.setEncoding('utf8');
    const lines = await new Promise<string[]>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.includes('voice is off') && stdout.endsWith('\n')) resolve(stdout.trim().split('\n'));
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${stdout}`)));
    });
    try {
      expect(lines).toHaveLength(2);
      const url = /^parley: listening on (http:\/\/\S+) /.exec(lines[0]!)?.[1];
      expect(url).toBeDefined();
      expect(lines[1]).toMatch(/^parley: voice is off, text works: .*apt-get install pocketsphinx pocketsphinx-en-us.*ASR_PROVIDER=openai/);
      const health = (await (await fetch(`${url}/healthz`)).json()) as { voice: { available: boolean; detail?: string } };
      expect(health.voice.available).toBe(false);
      expect(health.voice.detail).toContain('pocketsphinx');
      // Text works: the demo's dev key, one turn.
      const minted = await fetch(`${url}/dev/session-key`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"session_id":"main-1"}' });
      const { api_key } = (await minted.json()) as { api_key: string };
      const { client } = await startSession(`${url!.replace('http', 'ws')}/ws`, { session_id: 'main-1', api_key, mode: { kind: 'service', modality: 'text', greeting: false } });
      expect((await say(client, 'what is 6 times 7')).utterance?.text).toContain('42');
      client.close();
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});
