/**
 * A language model of your own: anything with a `name` and a `stream(request)` that yields text
 * deltas (and tool calls), then one `finish`. This one answers from a table; yours would call
 * your model. Run: `npx tsx examples/custom-llm.ts`.
 */
import { createServer, ModelError, type LanguageModel, type ModelEvent, type ModelRequest } from 'parley-realtime';

const ANSWERS: [RegExp, string][] = [
  [/opening hours|open/i, 'We are open from nine to five, Monday to Friday.'],
  [/price|cost/i, 'The basic plan costs ten euros a month.'],
];

class FaqModel implements LanguageModel {
  readonly name = 'faq';

  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const last = request.messages.at(-1);
    const question = last?.role === 'user' ? last.content : '';
    if (/broken/i.test(question)) throw new ModelError('the FAQ backend is down', true);
    const answer = ANSWERS.find(([pattern]) => pattern.test(question))?.[1] ?? 'I can tell you our opening hours and prices.';
    // Word by word, as a real model streams; a barge-in aborts the signal and the reply stops.
    for (const word of answer.split(/(?<= )/)) {
      if (request.signal.aborted) return;
      yield { type: 'text', delta: word };
    }
    yield { type: 'finish', reason: 'stop' };
  }
}

const server = await createServer({ llm: new FaqModel() });
console.log(`custom model example listening on ${await server.listen()}`);
process.once('SIGTERM', () => void server.close());
process.once('SIGINT', () => void server.close());
