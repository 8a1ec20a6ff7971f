import { describe, expect, it } from 'vitest';
import { Mode } from './protocol/start.ts';
import { checkToolChoice, validateTools } from './protocol/tools.ts';
import { mergeOnResume, resolveSettings } from './settings.ts';

/**
 * A resuming start's settings: the restored ones, overridden field by field by the new mode,
 * then checked as a whole. That a refusal leaves the resume token usable is the connection's
 * business: e2e/resume/resume-refusals.test.ts.
 */

const lookup = { name: 'lookup', parameters: { type: 'object', properties: {} } };
const other = { name: 'other', parameters: { type: 'object', properties: {} } };
const DEFAULTS = { greeting: 'Hello!', voice: 'slt', temperature: 0.7 };
const managed = { webSearch: false, endCall: false };

function declared(tools: unknown[]) {
  const result = validateTools(tools, managed);
  if (!result.ok) throw new Error(result.detail);
  return result.tools;
}

/** The settings a start resuming `restored` with `mode` would run with, and what the check says of its tool choice. */
function resume(restoredMode: Record<string, unknown>, mode: Record<string, unknown>) {
  const first = Mode.parse({ kind: 'service', ...restoredMode });
  const restored = resolveSettings(first, undefined, first.tools ? declared(first.tools) : [], DEFAULTS);
  const next = Mode.parse({ kind: 'service', ...mode });
  const settings = mergeOnResume(restored, next, undefined, next.tools ? declared(next.tools) : undefined);
  return { settings, refusal: checkToolChoice(settings.toolChoice, settings.tools, managed) };
}

describe('resume settings', () => {
  it('the restored tool choice is checked against the new tools: one that drops a tool it allows is refused, naming it', () => {
    const restored = { tools: [lookup], tool_choice: { allowed: ['lookup'] } };
    const refused = resume(restored, { tools: [other] });
    expect(refused.settings.toolChoice).toEqual({ allowed: ['lookup'] });
    expect(refused.refusal).toContain('lookup');
    // Corrected: the same tools again, no tools (the restored ones stay), or a new choice.
    expect(resume(restored, { tools: [lookup, other] }).refusal).toBeUndefined();
    expect(resume(restored, {}).refusal).toBeUndefined();
    expect(resume(restored, {}).settings.tools.map((t) => t.name)).toEqual(['lookup']);
    expect(resume(restored, { tools: [other], tool_choice: 'auto' }).refusal).toBeUndefined();
  });

  it('mode fields override the restored ones; the rest is kept', () => {
    const { settings } = resume({ instructions: 'Be a pirate.', temperature: 0.2, greeting: false }, { temperature: 1.1 });
    expect(settings).toMatchObject({ instructions: 'Be a pirate.', temperature: 1.1, greeting: false, voice: 'slt' });
  });
});
