import { describe, expect, it } from 'vitest';
import { FakeLanguageModel } from './testing/fake-llm.ts';
import { openTestSession, useFakeClock, type TestSession } from './testing/test-session.ts';

useFakeClock();

/** Sends input_text and returns the turn id from its asr. */
async function ask(client: TestSession, text: string): Promise<{ turnId: string; after: number }> {
  const after = client.frames.length;
  client.send({ type: 'input_text', text });
  const asr = await client.waitFor('asr', (f) => f.text === text, 1000, after);
  return { turnId: asr.turn_id as string, after };
}

function position(client: TestSession, frame: object | undefined): number {
  return client.frames.findIndex((f) => f === frame);
}

describe('a model failure ends only its turn', () => {
  it.each([
    [500, 'internal failure'],
    [503, 'overloaded'],
    [429, 'rate limited'],
  ])('HTTP %i → error model_error (retryable), done error; the next input works', async (status, message) => {
    const llm = new FakeLanguageModel();
    const client = openTestSession({ llm, mode: { greeting: false } });
    llm.enqueue({ error: message, status });
    const { turnId, after } = await ask(client, 'hello');
    const done = await client.waitFor('done', (f) => f.turn_id === turnId);
    expect(done.status).toBe('error');
    const errors = client.frames.slice(after).filter((f) => f.type === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ type: 'error', code: 'model_error', retryable: true, detail: expect.stringContaining(message) });
    const turn = client.all('turn').find((f) => f.turn_id === turnId);
    expect(position(client, turn)).toBeLessThan(position(client, errors[0]));
    expect(position(client, errors[0])).toBeLessThan(position(client, done));
    // Nothing was said, so there is no utterance and no delta for the turn.
    expect(client.turnTypes(turnId)).toEqual(['asr', 'turn', 'done']);

    llm.enqueue({ text: 'Back to normal.' });
    const next = await ask(client, 'again');
    await client.waitFor('done', (f) => f.turn_id === next.turnId);
    expect(client.all('utterance').find((u) => u.turn_id === next.turnId)?.text).toBe('Back to normal.');
    expect(client.closed).toBeUndefined();
    client.assertProtocol();
  });
});

describe('a reply that fails or stops midway', () => {
  it('a stream that breaks mid-reply → text_delta(s), error model_error, utterance with the partial text, done error', async () => {
    const llm = new FakeLanguageModel();
    const client = openTestSession({ llm, mode: { greeting: false } });
    const partial = 'This answer starts well and then';
    llm.enqueue({ failAfterText: partial });
    const { turnId, after } = await ask(client, 'tell me something');
    const done = await client.waitFor('done', (f) => f.turn_id === turnId);
    expect(done.status).toBe('error');
    const deltas = client.all('text_delta').filter((f) => f.turn_id === turnId);
    expect(deltas.map((d) => d.delta).join('')).toBe(partial);
    const utterance = client.all('utterance').find((u) => u.turn_id === turnId);
    expect(utterance).toMatchObject({ type: 'utterance', text: partial, turn_id: turnId, corrected: false });
    const errors = client.frames.slice(after).filter((f) => f.type === 'error');
    expect(errors.map((e) => [(e as { code: string }).code, (e as { retryable: boolean }).retryable])).toEqual([['model_error', true]]);
    expect(position(client, deltas.at(-1))).toBeLessThan(position(client, errors[0]));
    expect(position(client, errors[0])).toBeLessThan(position(client, utterance));
    expect(position(client, utterance)).toBeLessThan(position(client, done));

    llm.enqueue({ text: 'Recovered.' });
    const next = await ask(client, 'again');
    await client.waitFor('done', (f) => f.turn_id === next.turnId);
    expect(client.all('utterance').find((u) => u.turn_id === next.turnId)?.text).toBe('Recovered.');
    client.assertProtocol();
  });

  it('an interrupt while the model has not answered yet ends the turn as interrupted, not as an error', async () => {
    const llm = new FakeLanguageModel();
    const client = openTestSession({ llm, mode: { greeting: false } });
    llm.enqueue({ hang: true });
    const { turnId, after } = await ask(client, 'are you there');
    await client.waitFor('turn', (f) => f.turn_id === turnId, 1000, after);
    client.send({ type: 'interrupt' });
    const done = await client.waitFor('done', (f) => f.turn_id === turnId);
    expect(done.status).toBe('interrupted');
    llm.enqueue({ text: 'Yes.' });
    const next = await ask(client, 'hello');
    await client.waitFor('done', (f) => f.turn_id === next.turnId);
    expect(client.all('utterance').find((u) => u.turn_id === next.turnId)?.text).toBe('Yes.');
    expect(client.all('error')).toEqual([]);
    client.assertProtocol();
  });
});
