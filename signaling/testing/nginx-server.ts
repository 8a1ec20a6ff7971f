import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Debian's nginx for a test: its own prefix in a temp dir, no root needed (run as `nobody` when
 * the test runs as root), foreground, logs and temp files inside the dir. The caller writes what
 * goes inside `http {}` (server blocks, upstreams, included site files) and may rewrite it and
 * `reload()` (SIGHUP: new workers, old ones finish their connections), as a rolling restart does.
 *
 *   const nginx = await startNginx((dir) => `server { listen 127.0.0.1:${port}; ... }`);
 *   await nginx.stop();                               // afterAll
 */
export interface TestNginx {
  /** The temp prefix: nginx.conf, error.log, and anything the caller puts there (certificates). */
  readonly dir: string;
  /** Rewrites the http block and reloads; resolves once nginx accepted the new configuration. */
  reload(http: string): Promise<void>;
  /** error.log and stderr so far, for failure messages. */
  output(): string;
  /** Graceful stop (SIGQUIT: open connections finish), SIGKILL after 5 s. */
  stop(): Promise<void>;
}

export const NGINX = '/usr/sbin/nginx';
const NOBODY = { uid: 65534, gid: 65534 };

export function nginxAvailable(): boolean {
  return existsSync(NGINX);
}

/**
 * Starts nginx with `http(dir)` as the body of its http block and waits until `readyPort`
 * accepts connections. `dir` is created first, so the caller can write files into it.
 */
export async function startNginx(http: (dir: string) => string, readyPort: number): Promise<TestNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-nginx-'));
  const asNobody = process.getuid?.() === 0;
  for (const sub of ['logs', 'temp']) mkdirSync(join(dir, sub));
  if (asNobody) for (const path of [dir, join(dir, 'logs'), join(dir, 'temp')]) chownSync(path, NOBODY.uid, NOBODY.gid);
  const conf = join(dir, 'nginx.conf');
  const write = (body: string): void => writeFileSync(conf, mainConfig(dir, body));
  write(http(dir));
  const check = spawnSync(NGINX, ['-t', '-q', '-p', dir, '-c', conf, '-e', join(dir, 'logs', 'error.log')], { encoding: 'utf8', ...(asNobody ? NOBODY : {}) });
  if (check.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`nginx rejected the configuration: ${check.stderr}`);
  }
  const child = spawn(NGINX, ['-p', dir, '-c', conf, '-e', join(dir, 'logs', 'error.log'), '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(asNobody ? NOBODY : {}),
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A test process that ends without stop() must not leave nginx holding its port.
  const orphanGuard = (): void => void child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  void exited.then(() => process.off('exit', orphanGuard));
  const output = (): string => `${stderr}${readLog(dir)}`;
  try {
    await waitForPort(readyPort, child, output);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    dir,
    output,
    async reload(body) {
      write(body);
      const before = readLog(dir).length;
      child.kill('SIGHUP');
      // The master logs the signal, then either starts new workers or says why it kept the old ones.
      const deadline = Date.now() + 5000;
      while (!/reconfiguring|\[emerg\]/.test(readLog(dir).slice(before))) {
        if (Date.now() > deadline) throw new Error(`nginx did not reload: ${output()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      if (readLog(dir).slice(before).includes('[emerg]')) throw new Error(`nginx kept the old configuration: ${output()}`);
    },
    async stop() {
      await stopChild(child, exited);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function mainConfig(dir: string, http: string): string {
  const temp = join(dir, 'temp');
  return `
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'logs', 'error.log')} notice;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path ${temp}/body;
    proxy_temp_path ${temp}/proxy;
    fastcgi_temp_path ${temp}/fastcgi;
    uwsgi_temp_path ${temp}/uwsgi;
    scgi_temp_path ${temp}/scgi;
${http}
}
`;
}

function readLog(dir: string): string {
  try {
    return readFileSync(join(dir, 'logs', 'error.log'), 'utf8');
  } catch {
    return '';
  }
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`nginx exited before it was ready: ${output()}`);
    if (await accepts(port)) return;
    if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port} in time: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGQUIT');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
