import { createHmac } from 'node:crypto';
import type { Config } from '../config.ts';
import type { IceServerEntry } from '../../media/webrtc/call-peer.ts';

/**
 * ICE servers handed to a WebRTC client: STUN from STUN_URLS, and TURN with short-lived
 * credentials in the TURN REST scheme (username `expiry:session_id`, credential
 * base64(HMAC-SHA1(TURN_SECRET, username))), which coturn checks with `use-auth-secret`.
 * Entry shape: `{urls, username?, credential?}`.
 */
export function iceServersFor(config: Config, sessionId: string, now = Date.now()): IceServerEntry[] {
  const servers: IceServerEntry[] = [];
  const stun = split(config.STUN_URLS);
  if (stun.length > 0) servers.push({ urls: stun });
  const turn = split(config.TURN_URLS);
  if (turn.length > 0 && config.TURN_SECRET) {
    const username = `${Math.floor(now / 1000) + config.TURN_TTL_S}:${sessionId}`;
    const credential = createHmac('sha1', config.TURN_SECRET).update(username).digest('base64');
    servers.push({ urls: turn, username, credential });
  }
  return servers;
}

function split(list: string | undefined): string[] {
  return (list ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}
