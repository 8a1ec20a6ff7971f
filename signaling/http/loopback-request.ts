import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);
const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip'];

/** 127.0.0.0/8, ::1, ::ffff:127.x, or the name localhost. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const bare = address.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  const v4 = bare.startsWith('::ffff:') ? bare.slice(7) : bare;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/** The host name of a `Host` header value, without its port. */
function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  return host.split(':')[0] ?? '';
}

/** The host of an `Origin` value such as `http://127.0.0.1:8080`; undefined when it is not one. */
function originHost(origin: string): string | undefined {
  const match = /^https?:\/\/(\[[^\]]+\]|[^/:]+)(?::\d+)?$/i.exec(origin);
  return match?.[1]?.toLowerCase();
}

/**
 * Why a request did not come from a page on this machine, or undefined when it did: the peer
 * must be loopback, `Host` must name a loopback host, `Origin` (when sent) must be a loopback
 * page, and no proxy may have forwarded it.
 */
export function loopbackRequestProblem(req: IncomingMessage): string | undefined {
  if (!isLoopbackAddress(req.socket.remoteAddress)) return 'the peer is not on this machine';
  const forwarded = PROXY_HEADERS.find((name) => req.headers[name] !== undefined);
  if (forwarded) return `the request came through a proxy (${forwarded})`;
  const host = req.headers.host?.toLowerCase() ?? '';
  if (!LOOPBACK_NAMES.has(hostName(host))) return 'the Host header does not name this machine';
  const origin = req.headers.origin;
  if (origin !== undefined) {
    const from = originHost(origin);
    if (from === undefined || !LOOPBACK_NAMES.has(from)) return 'the Origin is not a page on this machine';
  }
  return undefined;
}
