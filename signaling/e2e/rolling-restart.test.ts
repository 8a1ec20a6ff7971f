import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concat, loadFixture, roomTone, streamRealtime } from '../../media/testing/audio-stream.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../session/testing/fake-openai-server.ts';
import { startFakeOpenAiSpeechServer, type FakeOpenAiSpeechServer } from '../../session/testing/fake-openai-speech-server.ts';
import { deploymentEnv } from '../testing/deployment.ts';
import { freePort } from '../testing/server-process.ts';
import { nginxAvailable, startNginx, type TestNginx } from '../testing/nginx-server.ts';
import { siteForTest } from '../testing/nginx-site.ts';
import { postgresAvailable, startPostgres, type TestPostgres } from '../testing/postgres-server.ts';
import { redisAvailable, startRedis, type TestRedis } from '../testing/redis-server.ts';
import { ResumingClient } from '../testing/resuming-client.ts';
import { startServerProcess, type ServerProcess } from '../testing/server-process.ts';
import { createPersistentKey } from '../testing/sql-engines.ts';
import type { WsTestClient } from '../testing/ws-test-client.ts';

/**
 * A rolling restart of a two-process deployment behind a real nginx (deploy/nginx/parley.conf),
 * under 100 live text sessions (typing, with a client tool in every other turn) and 20 voice
 * sessions (speaking), all with fake OpenAI-compatible providers: each process in turn gets
 * SIGTERM, drains (stash, server_restarting, 1012) and is started again. Every conversation must
 * go on elsewhere with its history intact, every tool result reaching the model exactly once.
 */
const TEXT_SESSIONS = 100;
const VOICE_SESSIONS = 20;
const available = redisAvailable() && postgresAvailable() && nginxAvailable();

let redis: TestRedis;
let postgres: TestPostgres;
let llm: FakeOpenAiServer;
let speech: FakeOpenAiSpeechServer;
let lb: TestNginx;
/** The load balancer's address: deploy/nginx/parley.conf's server block, in plain HTTP. */
let lbUrl: string;
let env: Record<string, string>;
let key: string;
const ports: number[] = [];
const servers: ServerProcess[] = [];

beforeAll(async () => {
  if (!available) return;
  [redis, postgres, llm, speech] = await Promise.all([startRedis(), startPostgres(), startFakeOpenAiServer(), startFakeOpenAiSpeechServer()]);
  let calls = 0;
  let replies = 0;
  llm.delayMs = 3;
  llm.script((body: { messages: Array<{ role: string; content: string | null }> }) => {
    const last = body.messages.at(-1);
    if (last?.role === 'user' && last.content?.startsWith('use the tool')) return { toolCalls: [{ id: `call_${(calls += 1)}`, name: 'lookup', args: { q: last.content } }] };
    return { text: `Reply number ${(replies += 1)} for you.` };
  });
  let transcripts = 0;
  speech.scriptTranscription(() => `voice turn ${(transcripts += 1)}`);
  env = {
    ...(await deploymentEnv({ redis, postgres })),
    LLM_PROVIDER: 'openai', LLM_BASE_URL: llm.url,
    ASR_PROVIDER: 'openai', ASR_BASE_URL: speech.url, TTS_PROVIDER: 'openai', TTS_BASE_URL: speech.url, TTS_VOICES: 'alloy',
    DRAIN_TIMEOUT_MS: '8000', TOOL_TIMEOUT_MS: '120000', WEBRTC_MEDIA_WORKERS: '0',
  };
  key = (await createPersistentKey({ DATA_DIR: '', DATABASE_URL: env.DATABASE_URL }, 'rolling')).key;
  ports.push(await freePort(), await freePort());
  servers.push(...(await Promise.all(ports.map((port) => startServerProcess({ ...env, PORT: String(port) })))));
  const [http, https] = [await freePort(), await freePort()];
  lb = await startNginx(() => siteForTest({ http, https, upstreams: ports }), https);
  lbUrl = `ws://127.0.0.1:${https}/ws`;
}, 60_000);

afterAll(async () => {
  if (!available) return;
  for (const s of servers) s.child.kill('SIGKILL');
  await lb?.stop();
  await Promise.all([redis.close(), postgres.close(), llm.close(), speech.close()]);
});

/** Every socket a conversation had, in order: what it said is what those sockets saw acknowledged. */
abstract class Host {
  readonly rc: ResumingClient;
  readonly sockets: WsTestClient[] = [];

  constructor(start: Record<string, unknown>) {
    this.rc = new ResumingClient(lbUrl, { ...start, api_key: key });
  }

  async connect(): Promise<WsTestClient> {
    const client = await this.rc.connect();
    this.sockets.push(client);
    return client;
  }

  /** The user turns the server acknowledged (asr), in order, minus eager replies it retracted. */
  said(): string[] {
    const frames = this.sockets.flatMap((s) => s.frames);
    const canceled = new Set(frames.flatMap((f) => (f.type === 'canceled' ? [f.turn_id] : [])));
    return frames.flatMap((f) => (f.type === 'asr' && !(f.turn_id && canceled.has(f.turn_id)) ? [f.text] : []));
  }

  /** The model request that answered `text`: its messages are the conversation as the server keeps it. */
  historyAt(text: string): Array<{ role: string; content: string | null }> {
    const request = llm.requests.findLast((r) => (r as { messages: Array<{ role: string; content: string }> }).messages.findLast((m) => m.role === 'user')?.content === text);
    if (!request) throw new Error(`${this.rc.sessionId}: the model never saw "${text}"`);
    return (request as { messages: Array<{ role: string; content: string | null }> }).messages;
  }
}

class TextHost extends Host {
  private turns = 0;
  readonly calls: string[] = [];
  /** Results sent again on a new connection because the last one may have lost them. */
  resent = 0;

  constructor(readonly sessionId: string) {
    super({ session_id: sessionId, mode: { kind: 'service', modality: 'text', greeting: false, tools: [{ name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } }] } });
  }

  /**
   * One typed turn, carried across any number of restarts, as a careful host does it: the text is
   * sent until the server acknowledges it (asr), and the turn's tool result is sent until it is
   * known to have arrived (the turn completed after it), sent again after a reconnect otherwise.
   */
  async turn(text = (this.turns += 1) % 2 === 0 ? `use the tool ${this.turns}` : `hello ${this.turns}`): Promise<void> {
    let acknowledged = false;
    let call: string | undefined;
    for (;;) {
      const c = this.rc.client;
      const after = c.frames.length;
      try {
        if (acknowledged && !call) return;
        if (call) {
          // The result may have been lost with the last socket: sent again. The server takes it
          // as the call's late result (and narrates it), or refuses a duplicate (unknown_tool_call).
          this.answer(c, call);
          this.resent += 1;
          await Promise.race([c.waitFor('turn', () => true, 15_000, after), c.waitFor('error', (f) => f.code === 'unknown_tool_call', 15_000, after)]);
          return;
        }
        c.send({ type: 'input_text', text });
        const asr = await c.waitFor('asr', (f) => f.text === text, 15_000, after);
        acknowledged = true;
        const next = await Promise.race([c.waitFor('tool_call', () => true, 15_000, after), c.waitFor('done', (f) => f.turn_id === asr.turn_id, 15_000, after)]);
        if (next.type === 'done') return;
        call = next.id;
        this.calls.push(call);
        await new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
        this.answer(c, call);
        // Completed after the result: the model had it. Interrupted (a drain): maybe not.
        if ((await c.waitFor('done', (f) => f.turn_id === asr.turn_id, 15_000, after)).status === 'completed') return;
        await c.waitClose();
        await this.connect();
      } catch (error) {
        if (!c.closed) throw error;
        acknowledged ||= c.frames.slice(after).some((f) => f.type === 'asr' && f.text === text);
        const seen = c.frames.slice(after).find((f) => f.type === 'tool_call');
        if (!call && seen?.type === 'tool_call') {
          call = seen.id;
          this.calls.push(call);
        }
        await this.connect();
      }
    }
  }

  private answer(c: WsTestClient, callId: string): void {
    if (!c.closed) c.send({ type: 'tool_result', id: callId, content: { marker: this.marker(callId) }, outcome: 'succeeded', verified: true });
  }

  /** Unique in the whole conversation, and not a prefix of another (call_1 / call_10). */
  marker(callId: string): string {
    return `<${this.sessionId}/${callId}>`;
  }
}

const CLIP = concat(roomTone(200), loadFixture('twelve.wav'), roomTone(900));

class VoiceHost extends Host {
  constructor(readonly sessionId: string) {
    super({ session_id: sessionId, mode: { kind: 'service', modality: 'voice', greeting: false }, audio: { sr: 16000 } });
  }

  /** One spoken turn; a restart in the middle makes the user say it again on the new connection. */
  async turn(): Promise<string> {
    for (;;) {
      const c = this.rc.client;
      const after = c.frames.length;
      await streamRealtime(c, CLIP);
      try {
        const asr = await c.waitFor('asr', () => true, 15_000, after);
        await c.waitFor('done', (f) => f.turn_id === asr.turn_id, 15_000, after);
        return asr.text;
      } catch (error) {
        if (!c.closed) throw error;
        await this.connect();
      }
    }
  }
}

describe.skipIf(!available)('rolling restart of 2 processes behind nginx', () => {
  it(`${TEXT_SESSIONS} text and ${VOICE_SESSIONS} voice sessions all go on, histories intact, every tool result exactly once`, async () => {
    const texts = Array.from({ length: TEXT_SESSIONS }, (_, i) => new TextHost(`roll-text-${i}`));
    const voices = Array.from({ length: VOICE_SESSIONS }, (_, i) => new VoiceHost(`roll-voice-${i}`));
    const hosts: Host[] = [...texts, ...voices];
    for (let i = 0; i < hosts.length; i += 20) await Promise.all(hosts.slice(i, i + 20).map((h) => h.connect()));

    // Everyone keeps talking while each process in turn is drained and started again.
    let talking = true;
    const talk = (h: { turn(): Promise<unknown> }) => {
      const first = h.turn();
      return { first, loop: (async () => { await first; await pause(); while (talking) { await h.turn(); await pause(); } })() };
    };
    const talks = hosts.map((h) => talk(h as TextHost | VoiceHost));
    const loops = talks.map((t) => t.loop);
    // Every conversation has a turn behind it before the first process goes.
    await Promise.all(talks.map((t) => t.first));
    // What happened when, and what nginx and the servers said: the message of any failure.
    const t0 = Date.now();
    const timeline: string[] = [];
    const log = (m: string) => timeline.push(`${Date.now() - t0} ms: ${m}`);
    const explain = (error: unknown): never => {
      const nginx = [...new Set(lb.output().split('\n').map((l) => l.replace(/^.*?\] \d+#\d+: \*\d+ /, '').replace(/, client.*$/, '')))];
      throw new Error([String(error), ...timeline, 'nginx:', ...nginx, ...servers.map((sv) => `server: ${sv.stdout().slice(-2000)}`)].join('\n'));
    };
    try {
      for (const index of [0, 1]) {
        const draining = servers[index]!;
        log(`SIGTERM to process ${index}`);
        const code = await draining.stop(20_000);
        log(`process ${index} exited`);
        expect(code, `process ${index} exits cleanly after its drain`).toBe(0);
        servers[index] = await startServerProcess({ ...env, PORT: String(ports[index]) });
        log(`process ${index} listening again`);
        // Traffic returns to it before the next process goes.
        await new Promise((r) => setTimeout(r, 1000));
      }
      talking = false;
      await Promise.all(loops);
    } catch (error) {
      explain(error);
    }

    // Each conversation's final turn shows what the server kept, as the model receives it.
    const problems: string[] = [];
    await Promise.all(texts.map(async (h) => {
      const final = `final check ${h.sessionId}`;
      await h.turn(final);
      const messages = h.historyAt(final);
      const users = messages.filter((m) => m.role === 'user').map((m) => m.content);
      if (JSON.stringify(users) !== JSON.stringify(h.said())) problems.push(`${h.sessionId}: history ${JSON.stringify(users)} but acknowledged ${JSON.stringify(h.said())}`);
      const json = JSON.stringify(messages);
      for (const call of h.calls) {
        const seen = json.split(h.marker(call)).length - 1;
        if (seen !== 1) problems.push(`${h.sessionId}: the result of ${call} reached the model ${seen} times`);
      }
    }));
    await Promise.all(voices.map(async (h) => {
      const final = await h.turn();
      const users = h.historyAt(final).filter((m) => m.role === 'user').map((m) => m.content);
      if (JSON.stringify(users) !== JSON.stringify(h.said())) problems.push(`${h.sessionId}: history ${JSON.stringify(users)} but acknowledged ${JSON.stringify(h.said())}`);
    }));
    expect(problems).toEqual([]);

    // Both processes were restarted under them: every conversation moved at least once.
    expect(hosts.filter((h) => h.rc.resumes === 0).map((h) => h.rc.sessionId)).toEqual([]);
    const toolResults = texts.reduce((n, h) => n + h.calls.length, 0);
    expect(toolResults).toBeGreaterThan(TEXT_SESSIONS);
    for (const h of hosts) for (const s of h.sockets) s.assertProtocol();
    for (const h of hosts) h.rc.client.close();
    const resent = texts.reduce((n, h) => n + h.resent, 0);
    process.stderr.write(`rolling restart: ${hosts.reduce((n, h) => n + h.rc.resumes, 0)} resumes, ${toolResults} tool results (${resent} sent again after a reconnect); ${timeline.join('; ')}\n`);
  }, 120_000);
});

/** A user's pause between turns (shortened: every session takes a turn about every second). */
function pause(): Promise<void> {
  return new Promise((r) => setTimeout(r, 500 + Math.random() * 1000));
}
