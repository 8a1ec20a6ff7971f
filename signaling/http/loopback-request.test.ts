import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isLoopbackAddress, loopbackRequestProblem } from './loopback-request.ts';

const request = (remoteAddress: string, headers: Record<string, string>): IncomingMessage =>
  ({ socket: { remoteAddress }, headers }) as unknown as IncomingMessage;

describe('loopback requests (the dev key route)', () => {
  it('loopback addresses: 127/8, ::1 and IPv4-mapped 127/8; nothing else', () => {
    for (const a of ['127.0.0.1', '127.5.6.7', '::1', '[::1]', '::ffff:127.0.0.1', 'localhost']) expect(isLoopbackAddress(a), a).toBe(true);
    for (const a of ['10.0.0.1', '192.168.1.2', '::ffff:10.0.0.1', '0.0.0.0', '::', 'example.org', '128.0.0.1', undefined]) expect(isLoopbackAddress(a), String(a)).toBe(false);
  });

  it('a peer on another machine is refused whatever its headers claim', () => {
    expect(loopbackRequestProblem(request('192.0.2.4', { host: '127.0.0.1:8080' }))).toContain('not on this machine');
  });

  it('Host, Origin and proxy headers are checked in turn', () => {
    expect(loopbackRequestProblem(request('127.0.0.1', { host: '127.0.0.1:8080' }))).toBeUndefined();
    expect(loopbackRequestProblem(request('127.0.0.1', { host: 'rebind.example' }))).toContain('Host');
    expect(loopbackRequestProblem(request('127.0.0.1', { host: 'localhost.evil.example' }))).toContain('Host');
    expect(loopbackRequestProblem(request('127.0.0.1', {}))).toContain('Host');
    expect(loopbackRequestProblem(request('127.0.0.1', { host: 'localhost', origin: 'http://localhost.evil.example' }))).toContain('Origin');
    expect(loopbackRequestProblem(request('127.0.0.1', { host: 'localhost', 'x-real-ip': '1.2.3.4' }))).toContain('proxy');
  });
});
