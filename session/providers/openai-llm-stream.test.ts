import { afterAll, describe, expect, it } from 'vitest';
import { ModelError, type ModelEvent } from './llm.ts';
import { Upstream } from './http/upstream.ts';
import { ChunkReader } from './openai-llm-stream.ts';

/** The reader on its own, fed bytes as undici's parser would (the adapter's tests cover it over sockets). */
const upstream = new Upstream('the model', ModelError, { baseUrl: 'http://127.0.0.1:9/v1', firstByteMs: 1000, idleMs: 1000 });
afterAll(() => upstream.close());

const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

function drain(reader: ChunkReader): ModelEvent[] {
  const events: ModelEvent[] = [];
  for (let e = reader.next(); e !== undefined; e = reader.next()) events.push(e);
  return events;
}

describe('ChunkReader', () => {
  it('reads a whole answer that came in one read chunk by chunk, as the events are asked for', () => {
    const reader = new ChunkReader(upstream);
    reader.data(Buffer.from(chunk({ role: 'assistant', content: '' }) + chunk({ content: 'Hi ' }) + chunk({ content: 'there.' }) + chunk({}, 'stop') + 'data: [DONE]\n\n'));
    // Nothing is read before it is asked for: [DONE] is not known yet.
    expect(reader.finished).toBe(false);
    expect(reader.next()).toEqual({ type: 'text', delta: 'Hi ' });
    expect(reader.finished).toBe(false);
    expect(drain(reader)).toEqual([{ type: 'text', delta: 'there.' }, { type: 'finish', reason: 'stop' }]);
    expect(reader.finished).toBe(true);
  });

  it('yields the events before a malformed chunk of the same read, then fails', () => {
    const reader = new ChunkReader(upstream);
    reader.data(Buffer.from(chunk({ content: 'Hi' }) + 'data: {not json\n\n' + chunk({ content: 'never' })));
    expect(reader.next()).toEqual({ type: 'text', delta: 'Hi' });
    expect(reader.failure).toBeUndefined();
    expect(reader.next()).toBeUndefined();
    expect(reader.failure?.message).toBeDefined();
    expect(reader.failure).toBeInstanceOf(ModelError);
    expect(drain(reader)).toEqual([]);
  });

  it('a body that breaks still delivers what arrived before it, then the failure', () => {
    const reader = new ChunkReader(upstream);
    reader.data(Buffer.from(chunk({ content: 'one ' }) + chunk({ content: 'two' })));
    reader.error(new Error('socket hang up'));
    expect(drain(reader)).toEqual([{ type: 'text', delta: 'one ' }, { type: 'text', delta: 'two' }]);
    expect(reader.failure).toBeInstanceOf(ModelError);
  });

  it('an ended body with a finish_reason but no [DONE] finishes; without one it failed early', () => {
    const done = new ChunkReader(upstream);
    done.data(Buffer.from(chunk({ content: 'ok' }) + chunk({}, 'length')));
    done.end();
    expect(drain(done)).toEqual([{ type: 'text', delta: 'ok' }, { type: 'finish', reason: 'length' }]);
    const early = new ChunkReader(upstream);
    early.data(Buffer.from(chunk({ content: 'cut' })));
    early.end();
    expect(drain(early)).toEqual([{ type: 'text', delta: 'cut' }]);
    expect(early.failure).toBeInstanceOf(ModelError);
  });

  it("the caller's abort is not a failure", () => {
    const reader = new ChunkReader(upstream);
    reader.data(Buffer.from(chunk({ content: 'a' })));
    reader.error(Upstream.CALLER_ABORTED);
    expect(reader.aborted).toBe(true);
    expect(reader.failure).toBeUndefined();
  });
});
