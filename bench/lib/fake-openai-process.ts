/**
 * The fake OpenAI-compatible chat server (session/testing/fake-openai-server.ts) as its own
 * process, for the adapter-path benchmark: it answers every request with what the local model
 * would say (composeLocalReply), streamed one word per SSE chunk like the local model yields one
 * word per delta, so both paths carry the same text in the same number of deltas.
 * Prints `listening on <url> ` (ChildServer's contract).
 *
 * BENCH_FAKE_STAMPS=<file>: appends `<last user message>\t<arrived ns>\t<first text sent ns>\t<first
 * text queued ns>` for every reply (sent: its bytes handed to the kernel; queued: its
 * res.write(); process.hrtime.bigint(), the machine's one monotonic clock), flushed every 200 ms,
 * so the bench can take the fake's own time out of each turn's latency.
 */
import { appendFileSync } from 'node:fs';
import { composeLocalReply } from '../../session/providers/local-reply.ts';
import type { ChatMessage } from '../../session/providers/llm.ts';
import { startFakeOpenAiServer } from '../../session/testing/fake-openai-server.ts';

const fake = await startFakeOpenAiServer();
fake.script((body: { messages: ChatMessage[] }) => ({ text: composeLocalReply(body.messages) }));
const stampsFile = process.env.BENCH_FAKE_STAMPS;
if (stampsFile) {
  let lines = '';
  fake.onFirstText = (arrivedNs, firstNs, body, queuedNs) => {
    const messages = (body as { messages: ChatMessage[] }).messages;
    lines += `${messages[messages.length - 1]?.content ?? ''}\t${arrivedNs}\t${firstNs}\t${queuedNs}\n`;
  };
  setInterval(() => {
    if (lines === '') return;
    appendFileSync(stampsFile, lines);
    lines = '';
  }, 200).unref();
}
// The fake records every request for tests; a long benchmark must not grow without bound.
setInterval(() => {
  fake.requests.length = 0;
  fake.headers.length = 0;
}, 1000).unref();
process.stdout.write(`listening on ${fake.url} \n`);
process.once('SIGTERM', () => void fake.close().then(() => process.exit(0)));
