import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../session/testing/fake-openai-server.ts';
import { say } from '../signaling/testing/conversation.ts';
import { freePort, REPO_ROOT, spawnServerProcess, type ServerProcess } from '../signaling/testing/server-process.ts';
import { startSession } from '../signaling/testing/ws-test-client.ts';

/**
 * docs/real-model.md as a user follows it: its `.env` (with the fake server's URL and key in
 * place of OpenAI's, a free port, a temp DATA_DIR), its key command and its start command, run
 * as written; a text turn then reaches the model with the key and model name from the file.
 */
const DOC = readFileSync(new URL('./real-model.md', import.meta.url), 'utf8');
const blocks = [...DOC.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
const envBlock = blocks.find((b) => b.startsWith('# .env\n'));
const command = (prefix: string): string[] => {
  const line = blocks.flatMap((b) => b.split('\n')).find((l) => l.startsWith(prefix));
  if (!line) throw new Error(`docs/real-model.md has no command starting "${prefix}"`);
  return line.split(/\s+/);
};

function setting(env: string, key: string, value: string): string {
  const pattern = new RegExp(`^${key}=.*$`, 'm');
  if (!pattern.test(env)) throw new Error(`the .env example has no ${key}=`);
  return env.replace(pattern, `${key}=${value}`);
}

describe('docs/real-model.md, followed step by step', { timeout: 60_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'parley-real-model-'));
  let model: FakeOpenAiServer;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    model = await startFakeOpenAiServer();
  });
  afterAll(async () => {
    await server?.stop();
    await model.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('the .env file, the key command and the start command hold a conversation with the model', async () => {
    expect(envBlock, 'the page shows a .env file').toBeDefined();
    let env = setting(envBlock!, 'LLM_BASE_URL', model.url);
    env = setting(env, 'LLM_API_KEY', 'sk-from-dotenv');
    env = setting(env, 'DATA_DIR', join(work, 'data'));
    env += `HOST=127.0.0.1\nPORT=${await freePort()}\nLOG_LEVEL=silent\n`;
    const envFile = join(work, '.env');
    writeFileSync(envFile, env);
    const withEnvFile = (argv: string[]) => argv.map((arg) => (arg === '--env-file=.env' ? `--env-file=${envFile}` : arg)).map((arg) => (arg === 'node' ? process.execPath : arg));
    // Only what the file sets: nothing from this test process's environment leaks in.
    const bare = { PATH: process.env.PATH ?? '' };

    const [node, ...keyArgs] = withEnvFile(command('node --env-file=.env --import tsx signaling/keys/cli.ts'));
    const created = spawnSync(node!, keyArgs, { env: bare, encoding: 'utf8', cwd: REPO_ROOT });
    expect(created.status, created.stderr).toBe(0);
    const key = created.stdout.trim().split('\n').at(-1) ?? '';
    expect(key).toMatch(/^ck_/);

    server = await spawnServerProcess(withEnvFile(command('node --env-file=.env --import tsx signaling/main.ts')), { env: bare });
    model.enqueue({ text: 'Hello from the real model.' });
    const { client } = await startSession(`${server.url.replace('http', 'ws')}/ws`, { session_id: 'docs-1', api_key: key, mode: { kind: 'service', modality: 'text', greeting: false } });
    const reply = await say(client, 'hi there');
    expect(reply.utterance?.text).toBe('Hello from the real model.');
    expect(model.headers[0]?.authorization).toBe('Bearer sk-from-dotenv');
    expect((model.requests[0] as { model: string }).model).toBe(/^LLM_MODEL=(.*)$/m.exec(envBlock!)?.[1]);
    client.close();
    expect(await server.stop()).toBe(0);
  });
});
