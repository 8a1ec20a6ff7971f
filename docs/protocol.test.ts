import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ClientFrame } from '../session/protocol/client.ts';
import { HTTP_ERRORS, SESSION_ERRORS, TOOL_ERRORS, WS_ERRORS } from '../session/protocol/errors.ts';
import { ServerFrame } from '../session/protocol/server.ts';
import { Mode } from '../session/protocol/start.ts';

/**
 * docs/protocol.md cannot drift from session/protocol/: every frame type with every field of
 * its schema, every mode field, and every error code with its retryable flag and close code
 * (or HTTP status) must appear in it.
 */
const doc = readFileSync(new URL('./protocol.md', import.meta.url), 'utf8');
const rowOf = (cell: string): string | undefined => doc.split('\n').find((line) => line.startsWith(`| \`${cell}\` |`));

type Shaped = { shape: Record<string, unknown> & { type: { value: string } } };
const frames = (union: { options: readonly unknown[] }) =>
  (union.options as Shaped[]).map((o) => [o.shape.type.value, Object.keys(o.shape).filter((k) => k !== 'type')] as const);

describe('docs/protocol.md documents the protocol vocabulary', () => {
  it.each([...frames(ClientFrame), ...frames(ServerFrame)])('frame %s with its fields', (type, fields) => {
    const row = rowOf(type);
    expect(row, `no table row for frame ${type}`).toBeDefined();
    for (const field of fields) expect(row, `${type}.${field}`).toMatch(new RegExp(`\`${field}\\??\``));
  });

  it('every mode field', () => {
    const modeLine = doc.slice(doc.indexOf("The start frame's `mode` is"), doc.indexOf('## Choices the protocol leaves open'));
    for (const field of Object.keys((Mode as unknown as { shape: object }).shape)) expect(modeLine).toContain(field);
  });

  it.each(Object.entries(WS_ERRORS))('WebSocket error %s with its retryable flag and close code', (code, spec) => {
    const row = rowOf(code);
    expect(row, `no table row for ${code}`).toBeDefined();
    expect(row).toContain(`| ${spec.retryable} |`);
    if ('close' in spec) expect(row).toContain(`| ${spec.close} |`);
  });

  it.each(Object.entries({ ...SESSION_ERRORS, ...TOOL_ERRORS }))('session error %s with its retryable flag', (code, spec) => {
    const row = rowOf(code);
    expect(row, `no table row for ${code}`).toBeDefined();
    expect(row).toContain(`| ${spec.retryable} |`);
  });

  it.each(Object.entries(HTTP_ERRORS))('HTTP error %s with its status and retryable flag', (code, { status, retryable }) => {
    expect(doc).toContain(`| ${status} | \`${code}\` | ${retryable} |`);
  });

  it.each(['unknown_call', 'not_deferrable', 'already_deferred', 'call_closed', 'duplicate_handle', 'invalid_interaction_id', 'invalid_state', 'unknown_interaction', 'already_closed', 'missing_answer'])(
    'acknowledgement reason %s',
    (reason) => expect(doc).toContain(`\`${reason}\``),
  );

  it('links nothing outside the repository but the web', () => {
    expect(doc).not.toMatch(/\]\(\.\.\/\.\.\//);
    expect(doc).not.toContain('shared/SPEC.md');
  });
});
