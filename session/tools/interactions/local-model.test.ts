import { describe, expect, it } from 'vitest';
import { LocalLanguageModel } from '../../providers/local-llm.ts';
import { transitionCall } from '../../providers/local-tools.ts';
import { openTestSession, useFakeClock } from '../../testing/test-session.ts';
import { ask, done, utteranceOf, WAIT_MS } from '../../testing/tool-kit.ts';
import { book, confirm, narration, narrationTurn, statesOf, TEST_TIMING } from '../../testing/interaction-kit.ts';
import { transitionTool } from './transition-tool.ts';
import type { Ask } from './interaction.ts';

/**
 * The offline model (LLM_PROVIDER=local, LocalLanguageModel) keeps working with interactions: it voices a raised
 * question in its narration turn and, when interaction_transition is forced, decides from the
 * user's words deterministically.
 */

const askOf = (id: string, options?: string[]): Ask => ({
  id, callId: 'c', jobId: 'c', toolName: 'book', prompt: `Prompt ${id}?`, options, binding: undefined, narration: 'started',
  voiced: true, decided: false, resolving: undefined, closed: undefined, attempts: 1, rounds: 0, watchdog: undefined,
});

describe('transitionCall (offline model)', () => {
  const tool = transitionTool([askOf('q-free'), askOf('q-size', ['small', 'large'])]);

  it.each([
    { text: 'the large one please', args: { interaction_id: 'q-size', action: 'resolve', choice: 'large' } },
    { text: 'LARGE', args: { interaction_id: 'q-size', action: 'resolve', choice: 'large' } },
    { text: 'never mind', args: { interaction_id: 'q-size', action: 'cancel' } },
    { text: 'cancel that', args: { interaction_id: 'q-size', action: 'cancel' } },
    { text: 'largest?', args: { interaction_id: 'q-size', action: 'clarify', message: 'Please choose one of: small, large.' } },
  ])('"$text" → $args.action', ({ text, args }) => {
    const call = transitionCall(tool, text);
    expect(call.name).toBe('interaction_transition');
    expect(call.args).toEqual(args);
  });

  it('a free-text question is resolved with the words', () => {
    const call = transitionCall(transitionTool([askOf('q-name')]), 'Ada Lovelace');
    expect(call.args).toEqual({ interaction_id: 'q-name', action: 'resolve', answer: 'Ada Lovelace' });
  });
});

describe('the offline model in a conversation', () => {
  useFakeClock();
  const openText = (mode: Record<string, unknown>) => ({ client: openTestSession({ llm: new LocalLanguageModel(), mode, tools: { interactions: TEST_TIMING } }) });

  it('voices the question, then resolves it with the option the user names through the bound tool', async () => {
    const { client } = openText({ greeting: false, tools: [book, confirm] });
    const { turnId } = await ask(client, 'book a table');
    const call = await client.waitFor('tool_call', (f) => f.name === 'book', WAIT_MS);
    client.send({
      type: 'tool_partial_result', id: call.id, content: {},
      interaction: { id: 'local-1', prompt: 'Small or large table?', options: ['small', 'large'], resolver: { tool: 'confirm', option_args: { small: { size: 'S' }, large: { size: 'L' } } } },
    });
    const started = await narration(client, 'started', 'local-1');
    await done(client, turnId);
    const narrationId = await narrationTurn(client, started);
    await done(client, narrationId);
    expect(utteranceOf(client, narrationId)).toBe('Small or large table? (options: small; large)');

    const answer = await ask(client, 'the large one please');
    const bound = await client.waitFor('tool_call', (f) => f.name === 'confirm', WAIT_MS);
    expect(bound.args).toEqual({ size: 'L' });
    client.send({ type: 'tool_result', id: bound.id, content: 'table L confirmed', outcome: 'succeeded', verified: true });
    await done(client, answer.turnId);
    expect(utteranceOf(client, answer.turnId)).toContain('interaction_transition succeeded');
    // Settled: the next turn is an ordinary one.
    const next = await ask(client, 'what is 2 plus 2');
    await done(client, next.turnId);
    expect(utteranceOf(client, next.turnId)).toBe('2 plus 2 is 4.');
    client.close();
    client.assertProtocol();
  });

  it('"never mind" cancels: the call behind the question is cancelled', async () => {
    const { client } = openText({ greeting: false, tools: [book, confirm] });
    const { turnId } = await ask(client, 'book a table');
    const call = await client.waitFor('tool_call', (f) => f.name === 'book', WAIT_MS);
    client.send({ type: 'tool_partial_result', id: call.id, content: {}, interaction: { id: 'local-2', prompt: 'Which day?', options: ['Friday', 'Saturday'] } });
    await done(client, turnId);
    await done(client, await narrationTurn(client, await narration(client, 'started', 'local-2')));
    const answer = await ask(client, 'never mind');
    await client.waitFor('tool_cancel', (f) => f.id === call.id, WAIT_MS);
    await narration(client, 'cancelled', 'local-2');
    await done(client, answer.turnId);
    expect(statesOf(client, 'local-2')).toEqual(['started', 'cancelled']);
    client.close();
    client.assertProtocol();
  });
});
