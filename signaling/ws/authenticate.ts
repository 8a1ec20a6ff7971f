import type { ServerContext } from '../context.ts';
import { checkKey, type Credential } from '../keys/credentials.ts';

/** A key the upgrade request already carried and that checked out. */
export interface HandshakeAuth {
  token: string;
  credential: Credential;
}

export type AuthResult = { ok: true; credential: Credential; token: string } | { ok: false; detail: string };

/**
 * Precedence when both the handshake's `Authorization: Bearer` and the start frame's `api_key`
 * are present: the handshake key authenticates, and a different start-frame key is refused as a
 * conflict rather than silently ignored. Rejects with StoreUnavailableError when a persistent
 * key cannot be checked.
 */
export async function authenticateStart(
  server: ServerContext,
  handshake: HandshakeAuth | undefined,
  startKey: string | undefined,
  sessionId: string,
): Promise<AuthResult> {
  let token: string;
  let credential: Credential;
  if (handshake) {
    if (startKey !== undefined && startKey !== handshake.token) {
      return { ok: false, detail: 'api_key in the start frame differs from the Authorization header key' };
    }
    ({ token, credential } = handshake);
  } else {
    if (startKey === undefined) return { ok: false, detail: 'an API key is required: Authorization: Bearer on the handshake or api_key in the start frame' };
    const checked = await checkKey(startKey, { store: server.stores.keys, secret: server.secret });
    if (!checked.ok) return { ok: false, detail: `key not accepted (${checked.reason})` };
    token = startKey;
    credential = checked.credential;
  }
  if (credential.kind === 'scoped' && credential.sessionId !== sessionId) {
    return { ok: false, detail: 'this scoped key is bound to another session_id' };
  }
  // A key valid at the handshake may have expired or been revoked by the time start arrives.
  const recheck = await checkKey(token, { store: server.stores.keys, secret: server.secret });
  if (!recheck.ok) return { ok: false, detail: `key not accepted (${recheck.reason})` };
  return { ok: true, credential, token };
}
