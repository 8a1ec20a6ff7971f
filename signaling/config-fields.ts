import { z } from 'zod';

/** The field shapes the server's settings are built from (config.ts, voice-config.ts). */

export const port = z.coerce.number().int().min(0).max(65535);
export const positiveInt = z.coerce.number().int().positive();
export const flag = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');
export const optionalUrl = z.url().optional();
/** A per-account limit: unset means none (the default: a deployment that sets none behaves as before). */
export const optionalLimit = z.coerce.number().int().positive().optional();

/** A comma-separated list of lower-case words or phrases, duplicates dropped. */
export const wordList = (defaults: readonly string[]) =>
  z
    .string()
    .default(defaults.join(','))
    .transform((list) => [...new Set(list.split(',').map((v) => v.trim().toLowerCase()).filter(Boolean))]);
