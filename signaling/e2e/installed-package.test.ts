import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { sid, textStart, WAIT_MS } from '../testing/conversation.ts';
import { spawnServerProcess, type ServerProcess } from '../testing/server-process.ts';
import { startSession, type WsTestClient } from '../testing/ws-test-client.ts';
import { APP_SOURCE, compile, installTarball, packRepository, readmeExamples, REPO, tarballFiles, writeTsconfigs, type PackageJson } from './consumer-project.ts';

/**
 * What a user gets: the package packed with `npm pack`, installed into a fresh project, an
 * application compiled against it under strict TypeScript (node16 and bundler resolution) and run,
 * the examples run from it, the `parley` command, and `npm start` in a clone stopped the way a
 * supervisor stops a service. One file, because all of it needs the one build `npm pack` makes.
 */

// Each test starts the installed package as a process (npm, a compiled example, `parley`): up to
// the 60 s start-up allowance of spawnServerProcess on a busy machine, plus a turn and a drain.
vi.setConfig({ testTimeout: 90_000 });

const EXAMPLES = readdirSync(join(REPO, 'examples')).filter((name) => name.endsWith('.ts'));
const scratch = mkdtempSync(join(tmpdir(), 'parley-package-'));
const project = join(scratch, 'app');
let tarball: string;
let manifest: PackageJson;
let diagnostics: { node16: string; bundler: string };

beforeAll(() => {
  tarball = packRepository(scratch);
  mkdirSync(join(project, 'examples'), { recursive: true });
  // The application's own: ws for the client in Node, Koa for the mounting example.
  manifest = installTarball(tarball, project, ['ws', '@types/ws', 'koa', '@types/koa']);
  writeFileSync(join(project, 'app.ts'), APP_SOURCE);
  const snippets = readmeExamples();
  for (const [file, source] of Object.entries(snippets)) writeFileSync(join(project, file), source);
  for (const example of EXAMPLES) copyFileSync(join(REPO, 'examples', example), join(project, 'examples', example));
  writeTsconfigs(project, ['app.ts', ...Object.keys(snippets), ...EXAMPLES.map((example) => `examples/${example}`)]);
  diagnostics = { node16: compile(project, 'tsconfig.node16.json'), bundler: compile(project, 'tsconfig.bundler.json') };
}, 300_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const running: ServerProcess[] = [];
const clients: WsTestClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.ws.terminate();
  for (const server of running.splice(0)) await server.stop(2000);
});

/** Started as a user or a supervisor starts it; resolves once it printed its URL (`listening`). */
async function start(argv: string[], env: Record<string, string>, options: { cwd?: string; listening?: RegExp } = {}): Promise<ServerProcess> {
  const server = await spawnServerProcess(argv, {
    cwd: options.cwd ?? project,
    env: { ...process.env, LOG_LEVEL: 'silent', HOST: '127.0.0.1', PORT: '0', ...env },
    timeoutMs: 60_000,
    ...(options.listening ? { listening: options.listening } : {}),
  });
  running.push(server);
  return server;
}

function dataDir(): string {
  return mkdtempSync(join(scratch, 'data-'));
}

/** A persistent key made with the installed `parley` command, as an operator would. */
function createKey(dir: string): string {
  const out = execFileSync(join(project, 'node_modules/.bin/parley'), ['keys', 'create', '--account', 'acme'], { env: { ...process.env, DATA_DIR: dir }, encoding: 'utf8' });
  return out.trimEnd().split('\n').at(-1) ?? '';
}

async function session(url: string, key: string): Promise<WsTestClient> {
  const { client } = await startSession(`${url.replace(/^http/, 'ws')}/ws`, { ...textStart(sid(), { greeting: false }), api_key: key });
  clients.push(client);
  return client;
}

async function replyTo(client: WsTestClient, text: string): Promise<string> {
  const after = client.frames.length;
  client.send({ type: 'input_text', text });
  const asr = await client.waitFor('asr', (f) => f.text === text, WAIT_MS, after);
  const done = await client.waitFor('done', (f) => f.turn_id === asr.turn_id, WAIT_MS, after);
  expect(done.status).toBe('completed');
  return client.all('utterance').find((u) => u.turn_id === asr.turn_id)?.text ?? '';
}

/** A live session is told server_restarting and closed 1012; the process exits 0; its port stops answering. */
async function expectDrained(server: ServerProcess, client: WsTestClient): Promise<void> {
  const closed = await client.waitClose(WAIT_MS);
  expect(closed.code).toBe(1012);
  expect(client.all('error').map((e) => [e.code, e.retryable])).toEqual([['server_restarting', true]]);
  expect(await server.exited).toBe(0);
  await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  // Nothing of the group outlives it for long (speech helpers follow their parent): no orphan serving.
  await vi.waitFor(() => expect(() => process.kill(-pidOf(server), 0)).toThrow(/ESRCH/), { timeout: 5000 });
}

const pidOf = (server: ServerProcess): number => server.child.pid ?? 0;

describe('the tarball', () => {
  it('holds what users run and nothing else', () => {
    const files = tarballFiles(tarball);
    expect(files.filter((f) => !f.startsWith('dist/'))).toEqual(expect.arrayContaining(['package.json', 'README.md']));
    expect(files.filter((f) => !f.startsWith('dist/') && f !== 'package.json' && f !== 'README.md')).toEqual([]);
    expect(files.filter((f) => /\.test\.|\/testing\/|\/e2e\/|bench|fixtures|\.png$|tsbuildinfo|\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
    for (const needed of [
      'dist/signaling/index.js', 'dist/signaling/index.d.ts', 'dist/client.js', 'dist/client/src/index.d.ts', 'dist/session/protocol/index.js',
      'dist/session/protocol/index.d.ts', 'dist/signaling/cli/parley.js', 'dist/signaling/main.js', 'dist/media/webrtc/media-worker.js',
      'dist/session/providers/flite-process.mjs', 'dist/client/demo/index.html',
    ]) expect(files).toContain(needed);
  });

  it('has every file its code loads by path (helper processes, worker threads, the demo page)', () => {
    const installed = join(project, 'node_modules/parley-realtime');
    const files = tarballFiles(tarball).filter((file) => file.endsWith('.js') || file.endsWith('.mjs'));
    const loaded: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(installed, file), 'utf8');
      for (const [, target] of text.matchAll(/new URL\(\s*["'](\.{1,2}\/[^"']+)["'],\s*import\.meta\.url\s*\)/g)) {
        const path = join(dirname(file), target!);
        // Loaded only by a server running from its sources (the on-the-fly client bundle, the tsx worker entry).
        if (path.endsWith('.ts') || path.endsWith('media-worker-entry.mjs')) continue;
        loaded.push(path);
      }
    }
    expect(loaded).toEqual(expect.arrayContaining(['dist/session/providers/flite-process.mjs', 'dist/media/webrtc/media-worker.js', 'dist/media/silero-worker.mjs', 'dist/client/demo/index.html']));
    expect(loaded.filter((path) => !existsSync(join(installed, path)))).toEqual([]);
  });

  it('runs no install script and declares a bin and the three entry points', () => {
    expect(manifest.name).toBe('parley-realtime');
    for (const hook of ['preinstall', 'install', 'postinstall']) expect(manifest.scripts?.[hook]).toBeUndefined();
    expect(manifest.bin).toEqual({ parley: './dist/signaling/cli/parley.js' });
    expect(Object.keys(manifest.exports ?? {})).toEqual(expect.arrayContaining(['.', './client', './protocol']));
    expect(manifest.dependencies).not.toHaveProperty('tsx');
    expect(manifest.dependencies).not.toHaveProperty('esbuild');
  });
});

describe('an application using the installed package', () => {
  it('compiles under strict TypeScript with node16 and with bundler resolution, and so do the READMEs\' examples', () => {
    expect(diagnostics.node16).toBe('');
    expect(diagnostics.bundler).toBe('');
  });

  it('runs: the server API with a server-side tool and the client from Node hold a text turn and a tool turn', () => {
    const out = execFileSync(process.execPath, ['build/app.js'], { cwd: project, encoding: 'utf8', timeout: 60_000, env: { ...process.env, DATA_DIR: dataDir() } });
    const result = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { modality: string; arithmetic: { status: string; reply: string }; tool: { status: string; reply: string }; seen: { city: string }[] };
    expect(result.modality).toBe('text');
    expect(result.arithmetic).toMatchObject({ status: 'completed', reply: expect.stringContaining('84') });
    expect(result.tool.status).toBe('completed');
    expect(result.tool.reply).toContain('19');
    expect(result.seen).toEqual([{ city: 'Lyon', session: expect.any(String) }]);
  });
});

describe('the examples, run from the installed package', () => {
  it.each([
    ['weather-tool', 'get weather city=Paris', /21/],
    ['custom-llm', 'What are your opening hours?', /nine to five/],
    ['mount-koa', 'What is twelve times seven?', /84/],
  ])('%s holds a turn and stops on SIGTERM', async (name, question, answer) => {
    const dir = dataDir();
    const key = createKey(dir);
    const example = await start([process.execPath, `build/examples/${name}.js`], { DATA_DIR: dir }, { listening: /listening on (http:\/\/\S+)/ });
    if (name === 'mount-koa') expect(await (await fetch(`${example.url}/hello`)).json()).toEqual({ hello: 'from your own app' });
    const client = await session(example.url, key);
    expect(await replyTo(client, question)).toMatch(answer);
    process.kill(pidOf(example), 'SIGTERM');
    expect((await client.waitClose(WAIT_MS)).code).toBe(1012);
    expect(await example.exited).toBe(0);
  });
});

describe('the parley command from the installed package', () => {
  it('--help on each command, migrate, keys create and list', () => {
    const parley = join(project, 'node_modules/.bin/parley');
    expect(execFileSync(parley, ['--help'], { encoding: 'utf8' })).toMatch(/start[\s\S]*keys[\s\S]*sessions[\s\S]*migrate/);
    expect(execFileSync(parley, ['keys', 'revoke', '--help'], { encoding: 'utf8' })).toMatch(/Usage: parley keys revoke/);
    expect(execFileSync(parley, ['sessions', '--help'], { encoding: 'utf8' })).toMatch(/Usage: parley sessions/);
    const dir = dataDir();
    // The migrations ship compiled: a fresh database gets the whole schema, then nothing more.
    const migrate = () => execFileSync(parley, ['migrate'], { encoding: 'utf8', env: { ...process.env, DATA_DIR: dir } });
    expect(migrate()).toMatch(/^migrate: SQLite in .+: applied 0001_/);
    expect(migrate()).toMatch(/schema is up to date\n$/);
    const key = createKey(dir);
    expect(key).toMatch(/^ck_/);
    const listed = execFileSync(parley, ['keys', 'list'], { encoding: 'utf8', env: { ...process.env, DATA_DIR: dir } });
    expect(listed).toMatch(/acme/);
    expect(listed).not.toContain(key);
  });

  it('parley start serves the prebuilt client and the demo page, holds a turn, and drains on SIGTERM', async () => {
    const dir = dataDir();
    const key = createKey(dir);
    const server = await start([join(project, 'node_modules/.bin/parley'), 'start', '--data-dir', dir], { LOCAL_LLM_WORD_DELAY_MS: '0' });
    expect(await (await fetch(`${server.url}/client.js`)).text()).toMatch(/RealtimeClient = class extends RealtimeEventTarget/);
    expect(await (await fetch(`${server.url}/`)).text()).toMatch(/<html/i);
    const client = await session(server.url, key);
    expect(await replyTo(client, 'What is twelve times seven?')).toMatch(/84/);
    process.kill(pidOf(server), 'SIGTERM');
    await expectDrained(server, client);
  });
});

describe('npm start in a clone, stopped as a supervisor stops it', () => {
  it.each([
    ['its main process (docker stop, systemd KillMode=mixed)', (pid: number) => process.kill(pid, 'SIGTERM')],
    ['its whole process group (systemd\'s default KillMode=control-group)', (pid: number) => process.kill(-pid, 'SIGTERM')],
  ])('SIGTERM to %s drains the server', async (_who, signal) => {
    const dir = dataDir();
    const keys = execFileSync('npm', ['run', '--silent', 'keys', '--', 'create', '--account', 'acme'], { cwd: REPO, encoding: 'utf8', env: { ...process.env, DATA_DIR: dir } });
    const key = keys.trimEnd().split('\n').at(-1) ?? '';
    expect(key).toMatch(/^ck_/);
    const npm = await start(['npm', 'start'], { DATA_DIR: dir, LOCAL_LLM_WORD_DELAY_MS: '50' }, { cwd: REPO });
    const client = await session(npm.url, key);
    // Mid-reply when the signal lands.
    client.send({ type: 'input_text', text: `say ${'word '.repeat(60)}` });
    await client.waitFor('text_delta', () => true, WAIT_MS);
    signal(pidOf(npm));
    await expectDrained(npm, client);
  });
});
