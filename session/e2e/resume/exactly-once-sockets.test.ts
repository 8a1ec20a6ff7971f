import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../providers/llm.ts';
import { EPISODE_TOOLS, episodeReply, goText, ResultLedger, resultToken } from '../../testing/exactly-once.ts';
import { Rng } from '../../testing/rng.ts';
import { sid, textStart, WAIT_MS } from '../../../signaling/testing/conversation.ts';
import { useServerWithFakeModel } from '../../../signaling/testing/fake-model-server.ts';
import { startSession, type WsTestClient } from '../../../signaling/testing/ws-test-client.ts';

/**
 * The exactly-once episodes end to end: the same scripted model behind the fake
 * OpenAI-compatible server, real sockets, drops as a lost network makes them (terminate, no
 * close handshake), resumes with the token, and every result sent again after each resume.
 * Fewer episodes than the session-core ring (session/resume/exactly-once.test.ts), real time.
 */
const TOOL_TIMEOUT_MS = 1500;
const EPISODES = Number(process.env.EXACTLY_ONCE_SOCKET_EPISODES ?? 12);
const SEED = Number(process.env.EXACTLY_ONCE_SEED ?? 1);
const servers = useServerWithFakeModel({ TOOL_TIMEOUT_MS: String(TOOL_TIMEOUT_MS), DEFERRED_TIMEOUT_S: '2', RESUME_TTL_S: '30' });

/** A connection and what the client reads of it. */
class Conversation {
  client!: WsTestClient;
  token = '';
  constructor(readonly sessionId: string) {}

  async open(resume: boolean): Promise<void> {
    const { client, ready } = await startSession(servers.t.wsUrl, {
      ...textStart(this.sessionId, { greeting: false, tools: EPISODE_TOOLS }), api_key: servers.t.key, ...(resume ? { resume_token: this.token } : {}),
    });
    this.client = client;
    this.token = ready.resume_token;
  }

  /** Sends a frame and waits until the server has handled it (set_voice is answered in order). */
  async send(frame: Record<string, unknown>): Promise<{ type: string; [k: string]: unknown }[]> {
    const before = this.client.frames.length;
    this.client.send(frame);
    this.client.send({ type: 'set_voice', voice: 'slt' });
    await this.client.waitFor('voice', () => true, WAIT_MS, before);
    return this.client.frames.slice(before) as { type: string }[];
  }
}

async function episode(seed: number): Promise<{ produced: number; lost: string[]; doubled: string[]; stuck: string[]; drops: number }> {
  const rng = new Rng(seed);
  const ledger = new ResultLedger();
  const convo = new Conversation(sid(`eo${seed}`));
  await convo.open(false);
  const known = new Map<string, 'open' | 'answered'>();
  let drops = 0;
  const read = (): void => {
    for (const f of convo.client.all('tool_call')) if (!known.has(f.id)) known.set(f.id, 'open');
  };
  const deliver = async (id: string): Promise<void> => {
    const answer = await convo.send({ type: 'tool_result', id, content: resultToken(id), outcome: 'succeeded', verified: true });
    ledger.delivered(id, !answer.some((f) => f.type === 'error' && f.code === 'unknown_tool_call'));
  };
  for (let t = 0; t < 2 + rng.int(2); t += 1) {
    convo.client.send({ type: 'input_text', text: goText(`e${seed}t${t}`, rng.chance(0.5) ? 1 : 2) });
    for (let step = 0; step < 6; step += 1) {
      await new Promise((r) => setTimeout(r, 5 + rng.int(40)));
      read();
      const open = [...known].filter(([, s]) => s === 'open').map(([id]) => id);
      const answered = [...known].filter(([, s]) => s === 'answered').map(([id]) => id);
      const roll = rng.int(100);
      if (roll < 40 && open.length) {
        const id = rng.pick(open);
        ledger.produced(id);
        known.set(id, 'answered');
        await deliver(id);
      } else if (roll < 50 && answered.length) {
        await deliver(rng.pick(answered));
      } else if (roll < 58) {
        await convo.send({ type: 'interrupt' });
      } else if (roll < 75) {
        drops += 1;
        // A result sent at the moment of the drop may be lost with the socket.
        if (open.length && rng.chance(0.5)) {
          const id = rng.pick(open);
          ledger.produced(id);
          known.set(id, 'answered');
          convo.client.send({ type: 'tool_result', id, content: resultToken(id), outcome: 'succeeded', verified: true });
        }
        convo.client.ws.terminate();
        await convo.client.waitClose();
        await servers.t.whenSessions(0);
        await servers.t.whenStashed(convo.token);
        await convo.open(true);
        for (const [id, state] of known) if (state === 'answered') await deliver(id);
      }
    }
  }
  read();
  for (const [id, state] of known) if (state === 'open') {
    ledger.produced(id);
    await deliver(id);
  }
  const stuck: string[] = [];
  const before = convo.client.frames.length;
  convo.client.send({ type: 'input_text', text: 'final question' });
  const asr = await convo.client.waitFor('asr', (f) => f.text === 'final question', WAIT_MS, before);
  const done = await convo.client.waitFor('done', (f) => f.turn_id === asr.turn_id, WAIT_MS, before).catch(() => undefined);
  if (done?.status !== 'completed') stuck.push('the final turn did not complete');
  const finalRequest = [...servers.fake.requests].reverse().find((r) => JSON.stringify(r).includes('final question') && JSON.stringify(r).includes(`e${seed}t0`)) as { messages: ChatMessage[] } | undefined;
  if (!finalRequest) stuck.push('no model request for the final turn');
  const verdict = ledger.verdict(finalRequest?.messages ?? []);
  convo.client.close();
  await servers.t.whenSessions(0);
  return { produced: ledger.producedCount, lost: verdict.lost, doubled: verdict.doubled, stuck, drops };
}

describe(`exactly-once tool results over real sockets (${EPISODES} episodes from seed ${SEED})`, () => {
  it('0 results lost, 0 doubled, 0 sessions stuck', { timeout: 180_000 }, async () => {
    servers.fake.script((body: { messages: ChatMessage[] }) => {
      const reply = episodeReply(body.messages);
      return 'text' in reply ? { text: reply.text } : { toolCalls: reply.calls.map((c) => ({ id: c.id, name: c.name, args: {} })) };
    });
    const failures: string[] = [];
    let produced = 0;
    let drops = 0;
    for (let n = 0; n < EPISODES; n += 1) {
      const seed = SEED * 1_009 + n;
      const r = await episode(seed);
      produced += r.produced;
      drops += r.drops;
      failures.push(...r.lost.map((id) => `seed ${seed}: lost ${id}`), ...r.doubled.map((id) => `seed ${seed}: doubled ${id}`), ...r.stuck.map((s) => `seed ${seed}: stuck: ${s}`));
    }
    console.info(`exactly-once over sockets: ${EPISODES} episodes, ${produced} results, ${drops} drops`);
    expect(failures).toEqual([]);
    expect(drops).toBeGreaterThan(0);
  });
});
