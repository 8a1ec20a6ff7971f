import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HTTP_ERRORS, SESSION_ERRORS, TOOL_ERRORS, WS_ERRORS } from '../session/protocol/errors.ts';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const rowOf = (code: string) => readme.split('\n').find((line) => line.startsWith(`| \`${code}\` |`) || line.includes(`| \`${code}\` |`));

describe('the README documents every error code', () => {
  it.each(Object.entries(WS_ERRORS))('WebSocket code %s with its retryable flag and close code', (code, spec) => {
    const row = rowOf(code);
    expect(row, `README has no table row for ${code}`).toBeDefined();
    expect(row).toContain(`| ${spec.retryable} |`);
    if ('close' in spec) expect(row).toContain(`| ${spec.close} |`);
  });

  it.each(Object.entries({ ...SESSION_ERRORS, ...TOOL_ERRORS }))('session code %s with its retryable flag', (code, spec) => {
    const row = rowOf(code);
    expect(row, `README has no table row for ${code}`).toBeDefined();
    expect(row).toContain(`| ${spec.retryable} |`);
  });

  it.each(Object.entries(HTTP_ERRORS))('HTTP code %s with its status and retryable flag', (code, { status, retryable }) => {
    expect(readme).toContain(`| ${status} | \`${code}\` | ${retryable} |`);
  });

  it.each(['unknown_call', 'not_deferrable', 'already_deferred', 'call_closed', 'duplicate_handle', 'invalid_interaction_id', 'invalid_state', 'unknown_interaction', 'already_closed', 'missing_answer'])(
    'acknowledgement reason %s',
    (reason) => {
      expect(readme).toContain(`\`${reason}\``);
    },
  );
});
