import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { iceServersFor } from './ice-servers.ts';
import { loadConfig } from '../config.ts';

describe('ICE servers', () => {
  it('hands out STUN and TURN REST credentials coturn accepts (username expiry:session, HMAC-SHA1)', () => {
    const config = loadConfig({ STUN_URLS: 'stun:stun.example.org:3478', TURN_URLS: 'turn:turn.example.org:3478?transport=udp, turns:turn.example.org:5349', TURN_SECRET: 'a-shared-secret-of-length', TURN_TTL_S: '600' });
    const now = 1_700_000_000_000;
    const servers = iceServersFor(config, 'sess-1', now);
    expect(servers[0]).toEqual({ urls: ['stun:stun.example.org:3478'] });
    const turn = servers[1]!;
    expect(turn.urls).toEqual(['turn:turn.example.org:3478?transport=udp', 'turns:turn.example.org:5349']);
    expect(turn.username).toBe(`${1_700_000_000 + 600}:sess-1`);
    expect(turn.credential).toBe(createHmac('sha1', 'a-shared-secret-of-length').update(turn.username!).digest('base64'));
  });

  it('hands out nothing when nothing is configured', () => {
    expect(iceServersFor(loadConfig({}), 's')).toEqual([]);
  });
});
