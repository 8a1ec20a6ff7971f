/**
 * The unit ring for the session core (openai-agents-js's fake transport, pipecat's run_test):
 * a Session built directly on a recording transport, with fake providers, on vitest's fake clock.
 *
 *   useFakeClock();                                   // in the test file: simulated time
 *   const llm = new FakeLanguageModel();              // scripted model (fake-llm.ts)
 *   llm.enqueue({ toolCalls: [{ id: 'c1', name: 'lookup', args: { order: '7' } }] }, { text: 'Done.' });
 *   const client = openTestSession({ llm, mode: { greeting: false, tools: [lookup] } });
 *   client.send({ type: 'input_text', text: 'where is my order' });   // a wire-shaped frame
 *   const call = await client.waitFor('tool_call');                  // resolves on arrival
 *   client.send({ type: 'tool_result', id: call.id, content: { status: 'shipped' } });
 *   await client.waitFor('done');
 *   client.assertProtocol();                                          // every frame met SPEC
 *
 * - TestSession reads like the end-to-end socket client (FrameLog: frames, audio, waitFor, all,
 *   turnTypes, assertProtocol, closed), so a test moves between the rings with few changes.
 * - Frames go in as JSON through parseClientFrame, exactly as the connection parses them (a parse
 *   failure is answered with its error frame, as on the wire); frames come out JSON round-tripped
 *   and checked against the server schemas.
 * - The start frame is parsed and resolved as signaling does (tools validated, defaults filled,
 *   a resume snapshot merged); the ready frame is the first frame recorded.
 * - useFakeClock(): timers, Date and performance.now are simulated and jump to the next timer
 *   whenever the test is waiting, so a 4 s grace period or a 0.3 s watchdog costs nothing and a
 *   wait's timeout is simulated time too. Nothing in a unit test may wait on real I/O.
 * - Voice sessions: voice-rig.ts (real VAD, fake recognition and synthesis, a microphone on the
 *   clock). Fakes stand in for outside services only: VAD, endpointer, pacer and the rest of
 *   media/ are the real ones.
 */
import { afterEach, beforeEach, vi } from 'vitest';
import type { VadFactory } from '../../media/vad.ts';
import { errorFrame } from '../protocol/errors.ts';
import { parseClientFrame } from '../protocol/parse.ts';
import type { ServerFrame } from '../protocol/server.ts';
import { checkToolChoice, validateTools } from '../protocol/tools.ts';
import type { SpeechToText } from '../providers/asr.ts';
import type { LanguageModel } from '../providers/llm.ts';
import type { WebSearch } from '../providers/search.ts';
import type { TextToSpeech } from '../providers/tts.ts';
import { catalogOf, FLITE_VOICES, type VoiceCatalog } from '../providers/voices.ts';
import type { SessionSnapshot } from '../resume/snapshot.ts';
import { Session } from '../session.ts';
import type { SessionDeps } from '../session-deps.ts';
import { mergeOnResume, resolveSettings, type SessionDefaults } from '../settings.ts';
import type { ToolDeskOptions } from '../tools/tool-desk.ts';
import type { Transport } from '../transport.ts';
import { FakeLanguageModel } from './fake-llm.ts';
import { FrameLog } from './frame-log.ts';

export interface TestSessionOptions {
  /** start.mode fields; kind 'service' and modality 'text' unless given. */
  mode?: Record<string, unknown>;
  /** start.audio (voice sessions). */
  audio?: Record<string, unknown>;
  /** Default: a FakeLanguageModel that answers 'ok'. */
  llm?: LanguageModel;
  voice?: { stt: SpeechToText; tts: TextToSpeech; vad: VadFactory };
  search?: WebSearch;
  tools?: Partial<ToolDeskOptions>;
  endCallGraceMs?: number;
  signOff?: string;
  /** HISTORY_MAX_CHARS (default: the session's own, 100,000). */
  historyMaxChars?: number;
  defaults?: Partial<SessionDefaults>;
  voices?: VoiceCatalog;
  /** Transport traits (see Transport): a WebRTC-like transport asks for more lead. */
  transport?: Pick<Transport, 'downlinkLeadMs' | 'sendAheadMs'>;
  /** A snapshot from drop(): the session resumes it (start.mode fields still override). */
  resume?: SessionSnapshot;
  sessionId?: string;
}

/** The server's defaults (signaling/config.ts) for what a session reads from the configuration. */
export const SERVER_DEFAULTS = {
  tools: {
    defaultTimeoutMs: 30_000,
    deferredTimeoutMs: 600_000,
    permissionTimeoutMs: 60_000,
    deepModel: undefined,
    interactions: { INTERACTION_QUEUE_DEADLINE_S: 10, INTERACTION_QUEUE_DEADLINE_ROUNDS: 3 },
  } satisfies ToolDeskOptions,
  endCallGraceMs: 4000,
  signOff: 'Thanks for talking with me. Goodbye!',
  defaults: { greeting: 'Hello! How can I help you today?', voice: 'slt', temperature: 0.7 } satisfies SessionDefaults,
};

let counter = 0;
/** Sessions not yet closed: a test's leftovers are closed after it (process-wide timers such as the pacer clock stop with them). */
const live = new Set<TestSession>();

/** A client's view of one session on a recording transport. */
export class TestSession extends FrameLog {
  readonly session: Session;
  readonly llm: LanguageModel;
  readonly logs: { level: 'info' | 'warn'; msg: string; obj: object }[] = [];

  constructor(options: TestSessionOptions = {}) {
    super();
    this.llm = options.llm ?? new FakeLanguageModel();
    const sessionId = options.sessionId ?? `unit-${(counter += 1)}`;
    const start = parseClientFrame(
      JSON.stringify({ type: 'start', session_id: sessionId, mode: { kind: 'service', modality: 'text', ...options.mode }, ...(options.audio ? { audio: options.audio } : {}) }),
    );
    if (!start.ok || start.frame.type !== 'start') throw new Error(`test start frame refused: ${start.ok ? start.frame.type : start.detail}`);
    const { mode, audio } = start.frame;
    const tools = mode.tools === undefined ? undefined : validateTools(mode.tools, { webSearch: mode.web_search ?? false, endCall: mode.end_call ?? false });
    if (tools && !tools.ok) throw new Error(`test tools refused: ${tools.detail}`);
    const declared = tools?.ok ? tools.tools : undefined;
    const settings = options.resume
      ? mergeOnResume(options.resume.settings, mode, audio, declared)
      : resolveSettings(mode, audio, declared ?? [], { ...SERVER_DEFAULTS.defaults, ...options.defaults });
    const badChoice = checkToolChoice(settings.toolChoice, settings.tools, { webSearch: settings.webSearch, endCall: settings.endCall });
    if (badChoice) throw new Error(`test tool choice refused: ${badChoice}`);
    const deps: SessionDeps = {
      transport: this.transport(options.transport ?? {}),
      llm: this.llm,
      voices: options.voices ?? options.voice?.tts.voices ?? catalogOf(FLITE_VOICES),
      log: {
        info: (obj, msg) => this.logs.push({ level: 'info', msg, obj }),
        warn: (obj, msg) => this.logs.push({ level: 'warn', msg, obj }),
      },
      ...(options.search ? { search: options.search } : {}),
      tools: { ...SERVER_DEFAULTS.tools, ...options.tools },
      endCallGraceMs: options.endCallGraceMs ?? SERVER_DEFAULTS.endCallGraceMs,
      signOff: options.signOff ?? SERVER_DEFAULTS.signOff,
      ...(options.historyMaxChars === undefined ? {} : { historyMaxChars: options.historyMaxChars }),
      ...(settings.modality === 'voice' && options.voice ? { voice: options.voice } : {}),
    };
    this.session = new Session(sessionId, settings, deps);
    live.add(this);
    if (options.resume) this.session.restore(options.resume);
    this.session.begin(`rt_unit_${counter}`);
  }

  /** A client frame as the wire would carry it (an object is sent as JSON, a string verbatim). */
  send(frame: unknown): void {
    const parsed = parseClientFrame(typeof frame === 'string' ? frame : JSON.stringify(frame));
    if (!parsed.ok) return this.recordFrame(JSON.parse(JSON.stringify(errorFrame(parsed.code, parsed.detail))));
    if (parsed.frame.type === 'start') throw new Error('start is sent once, by openTestSession');
    if (parsed.frame.type === 'feedback' || parsed.frame.type === 'client_error' || parsed.frame.type === 'webrtc_offer') {
      throw new Error(`${parsed.frame.type} is the connection's business: test it end to end`);
    }
    this.session.handle(parsed.frame);
  }

  /** Binary uplink audio (PCM16 LE at audio.sr). */
  sendBinary(bytes: Uint8Array): void {
    this.session.handleAudio(bytes);
  }

  /** The client ends the conversation (close 1000): nothing to resume. */
  close(): void {
    live.delete(this);
    if (this.closed) return;
    this.recordClose({ code: 1000, reason: '' });
    this.session.close();
  }

  /** The connection drops: the session stops and hands over what a resume needs. */
  drop(): Promise<SessionSnapshot> {
    live.delete(this);
    this.recordClose({ code: 1006, reason: '' });
    return this.session.detach();
  }

  private transport(traits: Pick<Transport, 'downlinkLeadMs' | 'sendAheadMs'>): Transport {
    return {
      ...traits,
      sendFrame: (frame: ServerFrame) => {
        if (!this.closed) this.recordFrame(JSON.parse(JSON.stringify(frame)));
      },
      sendAudio: (bytes) => {
        if (!this.closed) this.recordAudio(Buffer.from(bytes));
      },
      close: (code, reason) => {
        if (this.closed) return;
        this.recordClose({ code, reason });
        // As the connection does: a clean end closes the session, any other is resumable.
        live.delete(this);
        if (code === 1000) this.session.close();
        else this.session.detach();
      },
    };
  }
}

export function openTestSession(options: TestSessionOptions = {}): TestSession {
  return new TestSession(options);
}

/**
 * Simulated time for every test of the file: timers, Date and performance.now are fake, and the
 * clock jumps to the next timer whenever the test waits (vitest's 'nextTimerAsync' tick mode).
 */
export function useFakeClock(): void {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'Date', 'performance'] });
    vi.setTimerTickMode('nextTimerAsync');
  });
  afterEach(() => {
    // Still on the fake clock, so the timers they hold are cleared where they were set.
    for (const client of [...live]) client.close();
    vi.useRealTimers();
  });
}

/** Lets simulated time pass: the fake clock's timers due meanwhile fire, in order. */
export async function passTime(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
}
