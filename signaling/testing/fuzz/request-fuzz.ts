import { rawExchange, upgradeRequest } from '../raw-http.ts';
import type { Rng } from '../../../session/testing/rng.ts';

const TARGETS = ['/ws', '//x:99999/ws', '//ws', 'http://[::1', '*', '', '/ws?%zz', '/%E0%A4%A/ws', '/ws#frag', '/../../etc/passwd', 'ws://127.0.0.1/ws', '/ws/\u0000', '/api/v1/session-keys', '/dev/session-key', '/healthz'];
const METHODS = ['GET', 'POST', 'get', 'CONNECT', 'PRI', 'OPTIONS'];

/** A request line and headers that no well-behaved client sends, around a WebSocket upgrade. */
function oddRequest(rng: Rng): string {
  const target = rng.chance(0.3) ? `/${Array.from({ length: rng.int(3000) }, () => String.fromCharCode(33 + rng.int(94))).join('')}` : rng.pick(TARGETS);
  const headers: string[] = [`Host: ${rng.pick(['127.0.0.1', 'evil.example', '', '[::1]:1', 'a'.repeat(2000)])}`];
  if (rng.chance(0.8)) headers.push(`Upgrade: ${rng.pick(['websocket', 'WebSocket', 'h2c', ''])}`, `Connection: ${rng.pick(['Upgrade', 'upgrade, keep-alive', 'close'])}`);
  if (rng.chance(0.7)) headers.push(`Sec-WebSocket-Key: ${rng.pick(['dGhlIHNhbXBsZSBub25jZQ==', 'short', ''])}`);
  if (rng.chance(0.7)) headers.push(`Sec-WebSocket-Version: ${rng.pick(['13', '8', 'x'])}`);
  if (rng.chance(0.4)) headers.push(`Authorization: ${rng.pick(['Bearer', 'Bearer ck_x', `Bearer ${'k'.repeat(5000)}`, 'Basic Zm9vOmJhcg==', 'Bearer sk_a.b'])}`);
  if (rng.chance(0.4)) headers.push(`Origin: ${rng.pick(['null', 'https://evil.example', 'http://127.0.0.1', '\u00ff'])}`);
  if (rng.chance(0.2)) headers.push(`Sec-WebSocket-Extensions: ${rng.pick(['permessage-deflate', 'x; y=', ''])}`);
  if (rng.chance(0.2)) headers.push(`Content-Length: ${rng.pick(['5', '-1', 'abc', '99999999999'])}`);
  if (rng.chance(0.2)) headers.push(`X-Forwarded-For: ${rng.pick(['1.2.3.4', 'garbage', ''])}`);
  const version = rng.pick(['HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9']);
  return `${rng.pick(METHODS)} ${target} ${version}\r\n${headers.join('\r\n')}\r\n\r\n${rng.chance(0.2) ? 'hello' : ''}`;
}

/**
 * Sends `count` odd upgrade and HTTP requests, a few at a time: first every odd target in a
 * well-formed upgrade request and in a plain GET, then random ones. Resolves when all were
 * answered or dropped.
 */
export async function fuzzRequests(port: number, rng: Rng, count: number): Promise<number> {
  const sweep = TARGETS.flatMap((target) => [upgradeRequest(target), `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`]);
  const requests = Array.from({ length: count }, (_, i) => sweep[i] ?? oddRequest(rng));
  for (let i = 0; i < count; i += 8) await Promise.all(requests.slice(i, i + 8).map((request) => rawExchange(port, request, 1000)));
  return count;
}
