import { spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone, streamRealtime } from '../media/testing/audio-stream.ts';
import { say, sid } from '../signaling/testing/conversation.ts';
import { nginxAvailable, startNginx, type TestNginx } from '../signaling/testing/nginx-server.ts';
import { siteForTest } from '../signaling/testing/nginx-site.ts';
import { freePort, REPO_ROOT as ROOT, spawnServerProcess, type ServerProcess } from '../signaling/testing/server-process.ts';
import { startSession, type WsTestClient } from '../signaling/testing/ws-test-client.ts';

/**
 * The deploy recipe as shipped: deploy/nginx/parley.conf in front of the server started the way
 * deploy/systemd/parley.service starts it (its ExecStart, directory, environment and stop
 * signal), holding a text turn and a voice turn through nginx over TLS, then a drain on stop.
 * Only ports, paths and the certificate are swapped for the test's own; each swap must match
 * the shipped file exactly once, so the files cannot drift from what is tested.
 */

const UNIT_PATH = join(ROOT, 'deploy/systemd/parley.service');
const UNIT = readFileSync(UNIT_PATH, 'utf8');

/** `[Service]` entries of the unit, in order (a key may repeat, as Environment= does). */
function serviceEntries(unit: string): Array<[string, string]> {
  const section = unit.split(/^\[/m).find((s) => s.startsWith('Service]')) ?? '';
  return section
    .split('\n')
    .slice(1)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
}
const entries = serviceEntries(UNIT);
const entry = (key: string): string => {
  const found = entries.filter(([k]) => k === key);
  expect(found, `${key}= appears once in the unit`).toHaveLength(1);
  return found[0]![1];
};

/** The unit's environment (Environment= lines, then the EnvironmentFile), as systemd builds it. */
function unitEnvironment(envFile: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of entries.filter(([k]) => k === 'Environment')) {
    expect(value, 'Environment= values are unquoted KEY=value').not.toMatch(/["'\s]/);
    const [name, ...rest] = value.split('=');
    env[name!] = rest.join('=');
  }
  for (const line of readFileSync(envFile, 'utf8').split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match) env[match[1]!] = match[2]!;
  }
  return env;
}

/** A self-signed certificate for parley.example.org and 127.0.0.1 in `dir` (cert.pem, key.pem). */
function makeCertificate(dir: string): void {
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=parley.example.org', '-addext', 'subjectAltName=DNS:parley.example.org,IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`);
  if (process.getuid?.() === 0) for (const file of ['key.pem', 'cert.pem']) chownSync(join(dir, file), 65534, 65534);
}

function httpsCall(port: number, ca: string, path: string, options: RequestOptions & { body?: string } = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, ca, servername: 'parley.example.org', ...options }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.once('error', reject);
    req.end(options.body);
  });
}

describe.skipIf(!nginxAvailable())('deploy/: nginx site and systemd unit', { timeout: 60_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'parley-deploy-'));
  const dataDir = join(work, 'state');
  const envFile = join(work, 'parley.env');
  let nginx: TestNginx;
  let server: ServerProcess;
  let ports: { http: number; https: number; upstream: number };
  let cert: string;
  let site: string;
  let key: string;

  beforeAll(async () => {
    ports = { http: await freePort(), https: await freePort(), upstream: await freePort() };
    // What an operator puts in /etc/parley/parley.env; the unit's own values come first.
    writeFileSync(envFile, `# test overrides\nPORT=${ports.upstream}\nDATA_DIR=${dataDir}\nLOG_LEVEL=silent\n`);
    const env = { ...process.env, ...unitEnvironment(envFile), npm_config_update_notifier: 'false' };

    // The unit's comment tells the operator to create a key like this.
    const created = spawnSync('npm', ['run', '--silent', 'keys', '--', 'create', '--account', 'acme'], { cwd: ROOT, env, encoding: 'utf8' });
    expect(created.status, created.stderr).toBe(0);
    key = created.stdout.trim().split('\n').at(-1) ?? '';
    expect(key).toMatch(/^ck_/);

    expect(entry('WorkingDirectory')).toBe('/opt/parley');
    server = await spawnServerProcess(entry('ExecStart').split(/\s+/), { cwd: ROOT, env });

    // The certificate lives in nginx's own directory, which nginx (as nobody under root) can read.
    nginx = await startNginx((dir) => {
      makeCertificate(dir);
      cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
      site = siteForTest({ http: ports.http, https: ports.https, upstreams: [ports.upstream], certDir: dir });
      return site;
    }, ports.https);
  });

  afterAll(async () => {
    await server?.stop();
    await nginx?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('systemd-analyze accepts the unit', () => {
    // Offline check of every directive and of ExecStart's binary (Debian package systemd). A
    // User= that does not exist on this machine is not an error.
    const verify = spawnSync('systemd-analyze', ['verify', UNIT_PATH], { encoding: 'utf8' });
    expect(verify.error).toBeUndefined();
    expect(verify.status, verify.stderr).toBe(0);
    expect(verify.stderr).toBe('');
  });

  it('ExecStart needs nothing that `npm ci --omit=dev` leaves out', () => {
    // A loader named with --import must be a production dependency, or the service cannot start.
    const dependencies = Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: object }).dependencies);
    const argv = entry('ExecStart').split(/\s+/);
    for (const [i, arg] of argv.entries()) if (arg === '--import') expect(dependencies, `--import ${argv[i + 1]}`).toContain(argv[i + 1]);
    expect(UNIT).toContain('npm ci --omit=dev');
  });

  it('plain HTTP is redirected to HTTPS', async () => {
    const res = await new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
      httpRequest({ host: '127.0.0.1', port: ports.http, path: '/healthz', headers: { Host: 'parley.example.org' } }, (r) => {
        r.resume();
        resolve({ status: r.statusCode ?? 0, location: r.headers.location });
      })
        .once('error', reject)
        .end();
    });
    expect(res).toEqual({ status: 301, location: 'https://parley.example.org/healthz' });
  });

  it('serves HTTP routes through TLS: health, the demo page, a scoped key', async () => {
    const health = await httpsCall(ports.https, cert, '/healthz');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toMatchObject({ status: 'ok' });
    const page = await httpsCall(ports.https, cert, '/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>Parley');
    const minted = await httpsCall(ports.https, cert, '/api/v1/session-keys', {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ session_id: 'deploy-1' }),
    });
    expect(minted.status).toBe(201);
    expect(JSON.parse(minted.body).api_key).toMatch(/^sk_/);
  });

  it('holds a text turn and a voice turn over wss, then drains them on SIGTERM', async () => {
    const wsUrl = `wss://127.0.0.1:${ports.https}/ws`;
    const tls = { ca: cert, servername: 'parley.example.org' };
    const auth = { Authorization: `Bearer ${key}` };
    const text = await startSession(wsUrl, { session_id: sid('deploy'), mode: { kind: 'service', modality: 'text', greeting: false } }, auth, tls);
    const reply = await say(text.client, 'what is 12 times 7');
    expect(reply.utterance?.text).toContain('84');
    // `systemctl reload nginx` (new workers) must not cut a call: the old worker keeps it.
    await nginx.reload(site);
    expect((await say(text.client, 'what is 2 plus 3')).utterance?.text).toContain('5');

    const voice = await startSession(wsUrl, { session_id: sid('deploy'), mode: { kind: 'service', modality: 'voice', greeting: false }, audio: { sr: 16000 } }, auth, tls);
    await streamRealtime(voice.client, concat(roomTone(300), loadFixture('twelve.wav'), roomTone(1200)));
    const asr = await voice.client.waitFor('asr', () => true, 10_000);
    expect(asr.text).toBe('what is twelve times seven');
    await voice.client.waitFor('done', (f) => f.turn_id === asr.turn_id, 15_000);
    // Binary audio came back through the proxy: at least half a second of 16 kHz PCM16.
    expect(voice.client.audio.reduce((n, b) => n + b.length, 0)).toBeGreaterThan(16_000);

    // systemd with KillMode=mixed: SIGTERM to the main process only.
    expect(entry('KillMode')).toBe('mixed');
    expect(entry('KillSignal')).toBe('SIGTERM');
    const stopBoundMs = Number(entry('TimeoutStopSec')) * 1000;
    const stopped = Date.now();
    server.child.kill('SIGTERM');
    for (const client of [text.client, voice.client] as WsTestClient[]) {
      const error = await client.waitFor('error', (f) => f.code === 'server_restarting', 10_000);
      expect(error.retryable).toBe(true);
      expect((await client.waitClose(10_000)).code).toBe(1012);
      client.assertProtocol();
    }
    expect(await server.exited).toBe(0);
    expect(Date.now() - stopped).toBeLessThan(stopBoundMs);
  });
});
