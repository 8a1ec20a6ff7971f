import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HTTP_ERRORS, SESSION_ERRORS, TOOL_ERRORS, WS_ERRORS } from '../session/protocol/errors.ts';

/**
 * The README keeps the protocol notes and the error table (the full reference is
 * docs/protocol.md): every code with its retryable flag and close code, every HTTP code with its
 * status, so the table a reader trusts cannot drift from session/protocol/errors.ts.
 */
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const section = readme.slice(readme.indexOf('## Protocol\n'), readme.indexOf('\n## ', readme.indexOf('## Protocol\n') + 1));

describe("the README's protocol section", () => {
  it.each(Object.entries({ ...WS_ERRORS, ...SESSION_ERRORS, ...TOOL_ERRORS }))('error %s with its retryable flag and close code', (code, spec) => {
    const row = section.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
    expect(row, `no README row for ${code}`).toBeDefined();
    expect(row).toContain(`| ${spec.retryable} | ${'close' in spec ? spec.close : '–'} |`);
  });

  it.each(Object.entries(HTTP_ERRORS))('HTTP error %s with its status and retryable flag', (code, { status, retryable }) => {
    expect(section).toContain(`| ${status} | \`${code}\` | ${retryable} |`);
  });

  it('keeps the protocol notes and links the full reference', () => {
    expect(section).toContain('### Protocol notes');
    expect(section).toContain('(docs/protocol.md)');
  });
});
