/**
 * The fake OpenAI-compatible chat server (session/testing/fake-openai-server.ts) as its own
 * process, for the adapter-path benchmark: it answers every request with what the local model
 * would say (composeLocalReply), streamed one word per SSE chunk like the local model yields one
 * word per delta, so both paths carry the same text in the same number of deltas.
 * Prints `listening on <url> ` (ChildServer's contract).
 */
import { composeLocalReply } from '../../session/providers/local-reply.ts';
import type { ChatMessage } from '../../session/providers/llm.ts';
import { startFakeOpenAiServer } from '../../session/testing/fake-openai-server.ts';

const fake = await startFakeOpenAiServer();
fake.script((body: { messages: ChatMessage[] }) => ({ text: composeLocalReply(body.messages) }));
// The fake records every request for tests; a long benchmark must not grow without bound.
setInterval(() => {
  fake.requests.length = 0;
  fake.headers.length = 0;
}, 1000).unref();
process.stdout.write(`listening on ${fake.url} \n`);
process.once('SIGTERM', () => void fake.close().then(() => process.exit(0)));
