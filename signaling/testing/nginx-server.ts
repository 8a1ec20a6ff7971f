import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandPath, engineDir, freePort, removeDir, spawnEngine, type EngineProcess } from './engine-process.ts';

const SITE = fileURLToPath(new URL('../../deploy/nginx/parley.conf', import.meta.url));

/**
 * A real nginx (Debian package `nginx`) in front of test servers, running the repository's own
 * site file (deploy/nginx/parley.conf) with only its upstream servers and listen port replaced,
 * so what the README tells operators is what the tests run. Temp dir, free port, foreground.
 *
 *   const lb = await startNginx([portA, portB]);   // ws://127.0.0.1:${lb.port}/ws
 *   await lb.close();
 */
export interface TestNginx {
  readonly port: number;
  readonly url: string;
  readonly wsUrl: string;
  /** nginx's error log, for failure messages. */
  errors(): string;
  close(): Promise<void>;
}

export function nginxAvailable(): boolean {
  return commandPath('nginx', ['/usr/sbin']) !== undefined;
}

export async function startNginx(upstreamPorts: number[]): Promise<TestNginx> {
  const binary = commandPath('nginx', ['/usr/sbin']);
  if (!binary) throw new Error('nginx is not installed: apt-get install -y --no-install-recommends nginx');
  const dir = engineDir('nginx', true);
  const port = await freePort();
  const site = readFileSync(SITE, 'utf8')
    // The site's upstream lines, one per test server, with the site's own parameters.
    .replace(/^(\s*)server 127\.0\.0\.1:\d+( [^;]*)?;\n(\s*server 127\.0\.0\.1:\d+.*\n)*/m, (_m, indent: string, params = '') => upstreamPorts.map((p) => `${indent}server 127.0.0.1:${p}${params};\n`).join(''))
    .replace(/listen 80;/, `listen 127.0.0.1:${port};`);
  writeFileSync(join(dir, 'parley.conf'), site);
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'worker_processes 1;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} warn;`,
      'events { worker_connections 4096; }',
      'http {',
      '  access_log off;',
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${join(dir, t)};`),
      `  include ${join(dir, 'parley.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const engine: EngineProcess = await spawnEngine(binary, ['-c', join(dir, 'nginx.conf'), '-p', dir], { ready: () => listening(port), dir });
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/ws`,
    errors: () => {
      try {
        return readFileSync(join(dir, 'error.log'), 'utf8');
      } catch {
        return '';
      }
    },
    async close() {
      await engine.stop('SIGQUIT');
      removeDir(dir);
    },
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
