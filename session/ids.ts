import { randomBytes } from 'node:crypto';

/** Opaque, unguessable identifiers. Prefixes make logs and bug reports readable. */
export function randomId(prefix: string, bytes = 9): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}

export const newTurnId = (): string => randomId('turn', 6);
