import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSettings } from '../session/settings.ts';
import type { ChatMessage, ModelEvent } from '../session/providers/llm.ts';
import { LocalLanguageModel } from '../session/providers/local-llm.ts';
import { catalogOf, FLITE_VOICES } from '../session/providers/voices.ts';
import { Session } from '../session/session.ts';
import type { SessionDeps } from '../session/session-deps.ts';
import { ModelTokens } from '../session/usage/model-tokens.ts';
import { UsageMeter, type UsageEntry } from '../session/usage/usage-meter.ts';
import { LedgerWriter } from '../signaling/usage/ledger-writer.ts';
import { openUsageStore } from '../signaling/testing/usage-store.ts';
import { median, progress, round } from './lib/stats.ts';
import type { Row } from './types.ts';

/**
 * What metering costs per turn (issue 16: goal < 20 µs CPU), always side by side in one run, in
 * alternating rounds, medians of the rounds:
 *
 * - meters alone: the calls one turn makes (a text turn: 40 text deltas, the token estimate over
 *   a 20-message history, one tool call, the turn's close with its ledger entry; a voice turn adds
 *   5 s of uplink audio in 20 ms frames and 4 s of recognition) against the same loop with the
 *   meter calls left out;
 * - whole text turns on an in-process Session (offline model, frames serialised as the WebSocket
 *   does), as shipped against the same with the meters' methods replaced by no-ops: the cost in
 *   its real place, within the noise of a whole turn;
 * - the ledger write per turn on SQLite (LedgerWriter, one entry per write as one session makes
 *   them, and 100 per write as a busy server batches them).
 *
 * CPU is process.cpuUsage (user + system) of this process.
 */

export const name = 'metering';

const ROUNDS = 9;
const MICRO_TURNS = 20_000;
const SESSION_TURNS = 400;

const HISTORY: ChatMessage[] = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? { role: 'user', content: `question number ${i} about the weather in a city` } : { role: 'assistant', content: `An answer of a few words, number ${i}, about the weather.` }));
const DELTAS: ModelEvent[] = Array.from({ length: 40 }, (_, i) => ({ type: 'text', delta: `word${i} ` }));

function cpuMicros(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

async function cpuMicrosAsync(work: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

/** One turn's worth of events, with or without the meter calls a real turn makes. */
function turnLoop(metered: boolean, voice: boolean, sink: UsageEntry[]): () => void {
  const meter = new UsageMeter({ session_s: 1 }, { record: (e) => sink.push(e) });
  const frameBytes = 640;
  let checksum = 0;
  return () => {
    for (let turn = 0; turn < MICRO_TURNS; turn += 1) {
      if (voice) {
        for (let f = 0; f < 250; f += 1) {
          if (metered) meter.audioIn(frameBytes / 32_000);
          checksum += frameBytes;
        }
        for (let f = 0; f < 200; f += 1) {
          if (metered) meter.asr(320);
          checksum += 320;
        }
      }
      const tokens = metered ? new ModelTokens(HISTORY) : undefined;
      for (const event of DELTAS) {
        tokens?.note(event);
        checksum += event.type === 'text' ? event.delta.length : 0;
      }
      if (metered) {
        meter.toolCalls(1);
        tokens!.commit(meter, 'llm');
        checksum += meter.closeTurn(`turn_${turn}`, voice ? 4000 : 0).session_s;
      }
      if (sink.length > 1000) sink.length = 0;
    }
    if (checksum === -1) process.stderr.write('');
  };
}

function microRows(voice: boolean): Row[] {
  const metered: number[] = [];
  const bare: number[] = [];
  const sink: UsageEntry[] = [];
  for (let r = 0; r < ROUNDS; r += 1) {
    // Alternating order, so drift in the machine's load falls on both sides.
    const pair = r % 2 === 0 ? [true, false] : [false, true];
    for (const on of pair) (on ? metered : bare).push(cpuMicros(turnLoop(on, voice, sink)) / MICRO_TURNS);
  }
  const cost = median(metered.map((m, i) => m - bare[i]!));
  const what = voice ? 'voice turn (5 s up, 4 s recognised, 40 deltas)' : 'text turn (40 deltas, estimated tokens, 1 tool call)';
  return [
    { benchmark: name, metric: `meters per ${what}`, value: round(cost, 2), unit: 'µs CPU', note: `goal < 20 µs; metered ${round(median(metered), 2)} vs bare ${round(median(bare), 2)} µs per loop, medians of ${ROUNDS} alternating rounds of ${MICRO_TURNS} turns` },
  ];
}

/** The parts of UsageMeter and ModelTokens that run per turn, made no-ops for the baseline. */
function stubMeters(): () => void {
  const saved: Array<[object, string, unknown]> = [];
  const stub = (proto: object, method: string, replacement: unknown) => {
    saved.push([proto, method, (proto as Record<string, unknown>)[method]]);
    (proto as Record<string, unknown>)[method] = replacement;
  };
  const usage = { session_s: 0, audio_in_s: 0, audio_out_s: 0, audio_heard_s: 0, asr_s: 0, llm_input_tokens: 0, llm_output_tokens: 0, think_input_tokens: 0, think_output_tokens: 0, tts_chars: 0, tool_calls: 0, llm_tokens_estimated: false, think_tokens_estimated: false };
  for (const method of ['audioIn', 'asr', 'toolCalls', 'tokens', 'heard']) stub(UsageMeter.prototype, method, () => undefined);
  stub(UsageMeter.prototype, 'closeTurn', () => usage);
  stub(ModelTokens.prototype, 'note', () => undefined);
  stub(ModelTokens.prototype, 'commit', () => undefined);
  return () => {
    for (const [proto, method, original] of saved) (proto as Record<string, unknown>)[method] = original;
  };
}

/** Text turns on one in-process session: resolves when `turns` replies are done. */
async function sessionTurns(turns: number, sink: LedgerWriter | undefined): Promise<void> {
  let done = 0;
  let finished!: () => void;
  const all = new Promise<void>((resolve) => (finished = resolve));
  let session!: Session;
  const deps: SessionDeps = {
    transport: {
      sendFrame: (frame) => {
        JSON.stringify(frame);
        if (frame.type !== 'done') return;
        done += 1;
        if (done === turns) finished();
        else queueMicrotask(() => session.handle({ type: 'input_text', text: 'what is 12 times 7' }));
      },
      sendAudio: () => undefined,
      close: () => undefined,
    },
    llm: new LocalLanguageModel(0),
    voices: catalogOf(FLITE_VOICES),
    log: { info: () => undefined, warn: () => undefined },
    tools: { defaultTimeoutMs: 30_000, deferredTimeoutMs: 600_000, permissionTimeoutMs: 60_000, deepModel: undefined, interactions: { INTERACTION_QUEUE_DEADLINE_S: 10, INTERACTION_QUEUE_DEADLINE_ROUNDS: 3 } },
    endCallGraceMs: 4000,
    signOff: 'Bye.',
    ...(sink ? { usage: { prices: { session_s: 1 }, sink: { record: (entry) => sink.record({ ...entry, account: 'bench', sessionId: 'bench' }) } } } : {}),
  };
  const settings = resolveSettings({ kind: 'service', modality: 'text', greeting: false }, undefined, [], { greeting: 'Hi', voice: 'slt', temperature: 0.7 });
  session = new Session('bench', settings, deps);
  session.begin('rt_bench');
  session.handle({ type: 'input_text', text: 'what is 12 times 7' });
  await all;
  session.close();
  // The history grows with every turn; a fresh session per round keeps rounds alike.
}

async function sessionRows(): Promise<Row[]> {
  const metered: number[] = [];
  const stubbed: number[] = [];
  await sessionTurns(200, undefined);
  for (let r = 0; r < ROUNDS; r += 1) {
    for (const on of r % 2 === 0 ? [true, false] : [false, true]) {
      const restore = on ? () => undefined : stubMeters();
      try {
        (on ? metered : stubbed).push((await cpuMicrosAsync(() => sessionTurns(SESSION_TURNS, undefined))) / SESSION_TURNS);
      } finally {
        restore();
      }
    }
  }
  const diffs = metered.map((m, i) => m - stubbed[i]!);
  return [
    {
      benchmark: name,
      metric: 'meters per text turn in a real session (as shipped − meters stubbed)',
      value: round(median(diffs), 1),
      unit: 'µs CPU',
      note: `a whole turn costs ${round(median(metered), 0)} µs metered vs ${round(median(stubbed), 0)} stubbed (offline model, frames JSON-serialised); difference per round from ${round(Math.min(...diffs), 1)} to ${round(Math.max(...diffs), 1)} µs: the meters are within a whole turn's noise`,
    },
  ];
}

async function ledgerRows(): Promise<Row[]> {
  const rows: Row[] = [];
  const cases = [
    { batch: 1, portable: false, what: 'one entry per write (one session)' },
    { batch: 100, portable: false, what: '100 entries per write (a busy server)' },
    { batch: 1, portable: true, what: 'one entry per write through the portable query-builder path (PostgreSQL takes it)' },
  ];
  for (const c of cases) {
    const dir = mkdtempSync(join(tmpdir(), 'parley-bench-ledger-'));
    const store = await openUsageStore({ DATA_DIR: dir }, { portable: c.portable });
    const writer = new LedgerWriter(store.ledger, { warn: () => undefined, info: () => undefined, error: () => undefined });
    await store.book.setCredit('bench', 1e9);
    const meter = new UsageMeter({ session_s: 1 }, { record: (entry) => writer.record({ ...entry, account: 'bench', sessionId: 'bench' }) });
    try {
      const perEntry: number[] = [];
      const writes = c.batch === 1 ? 300 : 20;
      for (let r = 0; r < ROUNDS; r += 1) {
        const micros = await cpuMicrosAsync(async () => {
          for (let w = 0; w < writes; w += 1) {
            for (let i = 0; i < c.batch; i += 1) meter.closeTurn(`turn_${w}_${i}`, 0);
            await writer.flush();
          }
        });
        perEntry.push(micros / (writes * c.batch));
      }
      rows.push({
        benchmark: name,
        metric: `ledger write per turn, SQLite, ${c.what}`,
        value: round(median(perEntry), 1),
        unit: 'µs CPU',
        note: `a turn's entry from closeTurn to committed (LedgerWriter, ${c.portable ? 'kysely' : 'better-sqlite3 prepared statements'}, WAL, synchronous NORMAL, credit taken off in the same transaction), on the event loop; median of ${ROUNDS} rounds`,
      });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return rows;
}

export async function run(): Promise<Row[]> {
  progress('metering: meters alone, text and voice turns');
  const rows = [...microRows(false), ...microRows(true)];
  progress('metering: whole turns on an in-process session');
  rows.push(...(await sessionRows()));
  progress('metering: ledger writes on SQLite');
  rows.push(...(await ledgerRows()));
  return rows;
}
