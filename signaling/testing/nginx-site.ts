import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './server-process.ts';

const SITE = readFileSync(join(REPO_ROOT, 'deploy/nginx/parley.conf'), 'utf8');
/** The shipped upstream's example line; a test puts one like it per server process. */
const UPSTREAM_LINE = '    server 127.0.0.1:8080 max_fails=0;\n';

function replaceOnce(text: string, from: string, to: string): string {
  const parts = text.split(from);
  if (parts.length !== 2) throw new Error(`expected exactly one "${from.trim()}" in deploy/nginx/parley.conf, found ${parts.length - 1}`);
  return parts.join(to);
}

/**
 * The shipped site (deploy/nginx/parley.conf) as a test runs it: its listeners on the test's
 * loopback ports (IPv6 ones dropped), its upstream holding the test's server processes (the
 * shipped line once per port), its certificate paths in `certDir`. Without `certDir` the TLS
 * server answers plain HTTP on its port (ssl lines dropped): the proxying under test is the same.
 * Each swap must match the shipped file exactly once, so the file cannot drift from the tests.
 */
export function siteForTest(options: { http: number; https: number; upstreams: number[]; certDir?: string }): string {
  const { http, https, upstreams, certDir } = options;
  let site = SITE;
  site = replaceOnce(site, '    listen 80;\n', `    listen 127.0.0.1:${http};\n`);
  site = replaceOnce(site, '    listen [::]:80;\n', '');
  site = replaceOnce(site, '    listen [::]:443 ssl;\n', '');
  site = replaceOnce(site, UPSTREAM_LINE, upstreams.map((port) => UPSTREAM_LINE.replace('8080', String(port))).join(''));
  if (certDir) {
    site = replaceOnce(site, '    listen 443 ssl;\n', `    listen 127.0.0.1:${https} ssl;\n`);
    site = replaceOnce(site, '/etc/letsencrypt/live/parley.example.org/fullchain.pem', join(certDir, 'cert.pem'));
    return replaceOnce(site, '/etc/letsencrypt/live/parley.example.org/privkey.pem', join(certDir, 'key.pem'));
  }
  site = replaceOnce(site, '    listen 443 ssl;\n', `    listen 127.0.0.1:${https};\n`);
  return site.replace(/^ {4}ssl_\w+ .*\n/gm, '');
}
