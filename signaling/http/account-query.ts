import { z } from 'zod';
import { SESSION_ID_PATTERN } from '../../session/protocol/limits.ts';

/** A date (the start of that UTC day) or a date and time with Z or an offset. */
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * `from` (inclusive) and `to` (exclusive; a date alone means the end of that day, so
 * `from=2026-03-01&to=2026-03-31` is the whole of March) as ISO instants.
 */
function instant(bound: 'from' | 'to') {
  return z.string().transform((text, ctx) => {
    const day = DAY.test(text);
    const time = day ? Date.parse(`${text}T00:00:00Z`) : DATETIME.test(text) ? Date.parse(text) : NaN;
    if (Number.isNaN(time)) {
      ctx.addIssue({ code: 'custom', message: 'must be a date (2026-03-01) or a date and time with Z or an offset (2026-03-01T12:00:00Z)' });
      return z.NEVER;
    }
    return new Date(day && bound === 'to' ? time + 86_400_000 : time).toISOString();
  });
}

const common = {
  from: instant('from').optional(),
  to: instant('to').optional(),
  session_id: z.string().regex(SESSION_ID_PATTERN, 'must be a session id (1-64 of A-Z a-z 0-9 . _ -)').optional(),
};

export const UsageQuery = z.strictObject(common);
export const FeedbackQuery = z.strictObject({
  ...common,
  kind: z.enum(['feedback', 'client_error']).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

export type QueryResult<T> = { ok: true; value: T } | { ok: false; parameter: string; detail: string };

/**
 * Parses a query string into `schema`: each parameter once, no unknown ones, `from` before `to`.
 * A failure names the first parameter at fault, for a 400 the caller can act on.
 */
export function parseQuery<T extends { from?: string; to?: string }>(schema: z.ZodType<T>, query: Record<string, string | string[] | undefined>): QueryResult<T> {
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) return { ok: false, parameter: name, detail: `${name} may be given once` };
  }
  const parsed = schema.safeParse(query);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const parameter = issue.code === 'unrecognized_keys' ? issue.keys[0]! : String(issue.path[0] ?? 'query');
    const detail = issue.code === 'unrecognized_keys' ? `unknown parameter ${parameter}` : `${parameter} ${issue.message}`;
    return { ok: false, parameter, detail };
  }
  const { from, to } = parsed.data;
  if (from !== undefined && to !== undefined && from >= to) return { ok: false, parameter: 'to', detail: 'to must be after from' };
  return { ok: true, value: parsed.data };
}
