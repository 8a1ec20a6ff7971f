import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChatMessage, LanguageModel, ModelEvent, ModelRequest } from '../providers/llm.ts';
import type { ServerFrame } from '../protocol/server.ts';
import { parseClientFrame } from '../protocol/parse.ts';
import { validateTools } from '../protocol/tools.ts';
import { catalogOf, FLITE_VOICES } from '../providers/voices.ts';
import { Session } from '../session.ts';
import type { SessionDeps } from '../session-deps.ts';
import { mergeOnResume, resolveSettings } from '../settings.ts';
import { EPISODE_TOOLS, episodeReply, goText, ResultLedger, resultToken } from '../testing/exactly-once.ts';
import { Rng } from '../testing/rng.ts';
import type { SessionSnapshot } from './snapshot.ts';

/**
 * Exactly once, under any schedule: seeded episodes of user turns whose replies call one or two
 * client tools, with results sent at random moments, sent twice, deferred, interrupted, and the
 * connection dropped and resumed at random moments (frames in flight either way are lost, and the
 * client then sends again every result it ever produced). The session core runs on a recording
 * transport and a scripted model, on vitest's fake clock. Every result the server took must be
 * in the final history exactly once, every turn must end, and the session must still answer.
 */

const TOOL_TIMEOUT_MS = 3000;
const DEFERRED_TIMEOUT_MS = 5000;
const EPISODES = Number(process.env.EXACTLY_ONCE_EPISODES ?? 400);
const SEED = Number(process.env.EXACTLY_ONCE_SEED ?? 1);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'Date', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** The scripted model on the fake clock: 5 ms per event, stopping at once when aborted. */
class ScriptedModel implements LanguageModel {
  readonly name = 'scripted';
  readonly requests: ChatMessage[][] = [];

  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    this.requests.push(structuredClone(request.messages));
    const reply = episodeReply(request.messages);
    const events: ModelEvent[] = 'text' in reply
      ? reply.text.split(' ').map((w, i) => ({ type: 'text', delta: i ? ` ${w}` : w }))
      : reply.calls.map((c) => ({ type: 'tool_call', call: { ...c, args: {} } }));
    for (const event of events) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5);
        request.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        }, { once: true });
      });
      if (request.signal.aborted) return;
      yield event;
    }
    yield { type: 'finish', reason: 'text' in reply ? 'stop' : 'tool_calls' };
  }
}

/** One connection: a Session on a transport that records frames (or loses them, past a drop). */
class Link {
  readonly frames: ServerFrame[] = [];
  readonly session: Session;
  lost = false;

  constructor(llm: LanguageModel, resume?: SessionSnapshot) {
    const start = parseClientFrame(JSON.stringify({ type: 'start', session_id: 'eo', mode: { kind: 'service', modality: 'text', greeting: false, tools: EPISODE_TOOLS } }));
    if (!start.ok || start.frame.type !== 'start') throw new Error('start refused');
    const tools = validateTools(start.frame.mode.tools ?? [], { webSearch: false, endCall: false });
    if (!tools.ok) throw new Error(tools.detail);
    const settings = resume
      ? mergeOnResume(resume.settings, start.frame.mode, undefined, tools.tools)
      : resolveSettings(start.frame.mode, undefined, tools.tools, { greeting: 'hi', voice: 'slt', temperature: 0.7 });
    const deps: SessionDeps = {
      transport: {
        sendFrame: (frame) => {
          if (!this.lost) this.frames.push(JSON.parse(JSON.stringify(frame)) as ServerFrame);
        },
        sendAudio: () => undefined,
        close: () => undefined,
      },
      llm,
      voices: catalogOf(FLITE_VOICES),
      log: { info: () => undefined, warn: () => undefined },
      tools: {
        defaultTimeoutMs: TOOL_TIMEOUT_MS, deferredTimeoutMs: DEFERRED_TIMEOUT_MS, permissionTimeoutMs: 1000, deepModel: undefined,
        interactions: { INTERACTION_QUEUE_DEADLINE_S: 10, INTERACTION_QUEUE_DEADLINE_ROUNDS: 3 },
      },
      endCallGraceMs: 1000,
      signOff: 'Bye.',
      historyMaxChars: 10_000_000,
    };
    this.session = new Session('eo', settings, deps);
    if (resume) this.session.restore(resume);
    this.session.begin('rt_eo');
  }

  /** A client frame as the wire carries it; returns the frames it was answered with at once. */
  send(frame: Record<string, unknown>): ServerFrame[] {
    const parsed = parseClientFrame(JSON.stringify(frame));
    if (!parsed.ok || parsed.frame.type === 'start' || parsed.frame.type === 'feedback' || parsed.frame.type === 'client_error') throw new Error(`bad test frame ${JSON.stringify(frame)}`);
    const before = this.frames.length;
    this.session.handle(parsed.frame);
    return this.frames.slice(before);
  }
}

interface EpisodeResult {
  produced: number;
  accepted: number;
  lost: string[];
  doubled: string[];
  stuck: string[];
  drops: number;
}

async function passTime(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
}

async function episode(seed: number): Promise<EpisodeResult> {
  const rng = new Rng(seed);
  const llm = new ScriptedModel();
  const ledger = new ResultLedger();
  let link = new Link(llm);
  let drops = 0;
  /** Calls the client knows of (it saw their tool_call), and whether it has answered them. */
  const known = new Map<string, 'open' | 'answered' | 'deferred'>();
  let seenFrames = 0;
  const readFrames = (): void => {
    for (const frame of link.frames.slice(seenFrames)) {
      if (frame.type === 'tool_call' && !known.has(frame.id)) known.set(frame.id, 'open');
    }
    seenFrames = link.frames.length;
  };
  const deliver = (callId: string): void => {
    const answer = link.send({ type: 'tool_result', id: callId, content: resultToken(callId), outcome: 'succeeded', verified: true });
    const refused = answer.some((f) => f.type === 'error' && f.code === 'unknown_tool_call');
    ledger.delivered(callId, !refused);
  };
  const produce = (callId: string): void => {
    ledger.produced(callId);
    known.set(callId, 'answered');
  };
  const pick = <T>(items: T[]): T | undefined => (items.length ? rng.pick(items) : undefined);

  const turns = 2 + rng.int(4);
  for (let t = 0; t < turns; t += 1) {
    link.send({ type: 'input_text', text: goText(`s${seed}t${t}`, rng.chance(0.5) ? 1 : 2) });
    for (let step = 0; step < 12; step += 1) {
      await passTime(1 + rng.int(30));
      readFrames();
      const open = [...known].filter(([, s]) => s === 'open' || s === 'deferred').map(([id]) => id);
      const answered = [...known].filter(([, s]) => s === 'answered').map(([id]) => id);
      const roll = rng.int(100);
      if (roll < 40) {
        const id = pick(open);
        if (id) {
          produce(id);
          deliver(id);
        }
      } else if (roll < 50) {
        const id = pick(answered);
        if (id) deliver(id); // a duplicate
      } else if (roll < 58) {
        const id = pick(open.filter((c) => known.get(c) === 'open'));
        if (id) {
          const ack = link.send({ type: 'tool_deferred', id, handle: `h-${id}` }).find((f) => f.type === 'tool_deferred_ack');
          if (ack && 'accepted' in ack && ack.accepted) known.set(id, 'deferred');
        }
      } else if (roll < 64) {
        link.send({ type: 'interrupt' });
      } else if (roll < 72) {
        // The connection drops: results the client sends at that moment are lost with it, and
        // so are the server's last frames. The client resumes, then sends again every result
        // it ever produced, since it cannot know which arrived.
        drops += 1;
        const inFlight = pick(open);
        if (inFlight) produce(inFlight);
        link.lost = true;
        const detaching = Promise.resolve(link.session.detach());
        let snapshot: SessionSnapshot | undefined;
        void detaching.then((s) => (snapshot = s));
        while (!snapshot) await passTime(1);
        link = new Link(llm, JSON.parse(JSON.stringify(snapshot)) as SessionSnapshot);
        seenFrames = 0;
        for (const [id, state] of known) if (state === 'answered') deliver(id);
      }
    }
  }

  // The client answers every call it knows of; then time runs past every timeout.
  readFrames();
  for (const [id, state] of known) if (state !== 'answered') {
    produce(id);
    deliver(id);
  }
  await passTime(DEFERRED_TIMEOUT_MS + TOOL_TIMEOUT_MS);
  readFrames();

  const stuck: string[] = [];
  const before = llm.requests.length;
  link.send({ type: 'input_text', text: 'final question' });
  await passTime(2000);
  const finalTurn = link.frames.filter((f) => f.type === 'asr' && f.text === 'final question').at(-1);
  const finalDone = finalTurn && 'turn_id' in finalTurn ? link.frames.find((f) => f.type === 'done' && f.turn_id === finalTurn.turn_id) : undefined;
  if (!finalDone || !('status' in finalDone) || finalDone.status !== 'completed') stuck.push('the final turn did not complete');
  const turnIds = link.frames.filter((f) => f.type === 'turn').map((f) => ('turn_id' in f ? f.turn_id : ''));
  const doneIds = new Set(link.frames.filter((f) => f.type === 'done').map((f) => ('turn_id' in f ? f.turn_id : '')));
  for (const id of turnIds) if (!doneIds.has(id)) stuck.push(`turn ${id} without done`);
  if (link.session.desk.calls.pending().length > 0) stuck.push(`${link.session.desk.calls.pending().length} call(s) still open`);
  const finalRequest = llm.requests.slice(before).find((m) => m.some((x) => x.role === 'user' && x.content === 'final question'));
  if (!finalRequest) stuck.push('no model request for the final turn');
  const verdict = ledger.verdict(finalRequest ?? []);
  link.session.close();
  return { produced: ledger.producedCount, accepted: verdict.accepted, lost: verdict.lost, doubled: verdict.doubled, stuck, drops };
}

describe(`exactly-once tool results under random schedules (${EPISODES} episodes from seed ${SEED})`, () => {
  it('0 results lost, 0 doubled, 0 sessions stuck', { timeout: 120_000 }, async () => {
    const totals = { produced: 0, accepted: 0, drops: 0 };
    const failures: string[] = [];
    for (let n = 0; n < EPISODES; n += 1) {
      const seed = SEED * 100_003 + n;
      const r = await episode(seed);
      totals.produced += r.produced;
      totals.accepted += r.accepted;
      totals.drops += r.drops;
      for (const id of r.lost) failures.push(`seed ${seed}: lost ${id}`);
      for (const id of r.doubled) failures.push(`seed ${seed}: doubled ${id}`);
      for (const s of r.stuck) failures.push(`seed ${seed}: stuck: ${s}`);
    }
    console.info(`exactly-once: ${EPISODES} episodes, ${totals.produced} results produced, ${totals.accepted} taken by the server, ${totals.drops} drops`);
    expect(failures).toEqual([]);
    expect(totals.drops).toBeGreaterThan(EPISODES / 2);
    expect(totals.accepted).toBeGreaterThan(EPISODES);
  });
});
