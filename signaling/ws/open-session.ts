import { Session } from '../../session/session.ts';
import type { SessionDeps } from '../../session/session-deps.ts';
import type { SessionObserver } from '../../session/observer.ts';
import { mergeOnResume, resolveSettings, type SessionSettings } from '../../session/settings.ts';
import type { StashEntry } from '../../session/resume/snapshot.ts';
import type { Transport } from '../../session/transport.ts';
import type { ServerContext } from '../context.ts';
import type { WsErrorCode } from '../../session/protocol/errors.ts';
import type { StartFrame } from '../../session/protocol/start.ts';
import { checkToolChoice, validateTools } from '../../session/protocol/tools.ts';
import type { Credential } from '../keys/credentials.ts';
import { StoreUnavailableError } from '../stores/unavailable.ts';
import { authenticateStart, type HandshakeAuth } from './authenticate.ts';
import { admitSession, type Refusal } from '../usage/admission.ts';

export interface PreparedSession {
  ok: true;
  credential: Credential;
  settings: SessionSettings;
  resumed: boolean;
  /** The stash entry a resume took: given back if the session never begins. */
  taken: { token: string; entry: StashEntry } | undefined;
  /** The account's concurrent-session limit, for the live-session registry (0: none). */
  maxSessions: number;
  /** Builds the session on its transport; `media` overrides the pipeline's formats (WebRTC); `observer` measures it. */
  build(transport: Transport, media?: SessionDeps['media'], observer?: SessionObserver): Session;
}

export type PrepareResult = PreparedSession | { ok: false; code: WsErrorCode; detail: string; retryAfterMs?: number; limit?: Refusal['limit'] };

export interface SessionHooks {
  /** Takes a live-session slot; false when the process is full (server_busy). */
  admit(): boolean;
  /** After every reply: the connection writes the conversation through to a shared stash. */
  onTurnEnd(): void;
}

/**
 * Everything between a valid start frame and a live Session: feature checks, authentication,
 * capacity, the resume token, and the session's dependencies. Checks run in the order a client
 * can fix them; `resume_failed` is the one refusal that leaves the socket open for a fresh start.
 * A resume token is taken atomically (single use across processes) and given back by every
 * later refusal, so a refused start (even a retryable server_busy) leaves the conversation
 * resumable. A store that cannot answer (a persistent key or a token to check) is
 * `store_unavailable`: retryable, and the token is left as it was.
 */
export async function prepareSession(server: ServerContext, handshake: HandshakeAuth | undefined, start: StartFrame, hooks: SessionHooks): Promise<PrepareResult> {
  try {
    return await prepare(server, handshake, start, hooks);
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    server.log.warn({ err: error.message, session_id: start.session_id }, 'start refused: a store is unavailable');
    const what = error.store === 'redis' ? 'the resume stash' : 'the key database';
    return { ok: false, code: 'store_unavailable', detail: `${what} is unavailable right now; retry shortly (a resume token stays valid)` };
  }
}

async function prepare(server: ServerContext, handshake: HandshakeAuth | undefined, start: StartFrame, hooks: SessionHooks): Promise<PrepareResult> {
  const { config } = server;
  const mode = start.mode;
  const serverTools = server.serverTools.names();
  const tools = mode.tools === undefined ? undefined : validateTools(mode.tools, { webSearch: mode.web_search ?? false, endCall: mode.end_call ?? false, serverTools });
  if (tools && !tools.ok) return { ok: false, code: 'invalid_tools', detail: tools.detail };
  const auth = await authenticateStart(server, handshake, start.api_key, start.session_id);
  if (!auth.ok) return { ok: false, code: 'unauthorized', detail: auth.detail };
  if (mode.voice !== undefined && !server.voices.find(mode.voice)) return { ok: false, code: 'invalid_start_frame', detail: `mode.voice: unknown voice "${mode.voice}"` };
  // Checked before anything is taken: a refused start leaves a resume token as it was.
  const admitted = await admitSession(server.usage, auth.credential.account, server.log);
  if (!admitted.ok) return admitted;
  return prepareAdmitted(server, start, auth.credential, tools, hooks, admitted.maxSessions);
}

/** The rest of a start once the account may open a session: resume, settings, features, dependencies. */
async function prepareAdmitted(
  server: ServerContext,
  start: StartFrame,
  credential: Credential,
  tools: ReturnType<typeof validateTools> | undefined,
  hooks: SessionHooks,
  maxSessions: number,
): Promise<PrepareResult> {
  const { config } = server;
  const mode = start.mode;

  let taken: PreparedSession['taken'];
  const resumes = server.observability.metrics.resume;
  if (start.resume_token !== undefined) {
    // Not this caller's conversation: refused, and left for its owner.
    const result = await server.stores.stash.take(start.resume_token, { account: credential.account, sessionId: start.session_id });
    if (result.status === 'not_owner') {
      resumes.inc({ outcome: 'refused' });
      return { ok: false, code: 'resume_failed', detail: 'resume token belongs to another account or session; start again without it' };
    }
    if (result.status === 'unknown') {
      resumes.inc({ outcome: 'unknown' });
      return { ok: false, code: 'resume_failed', detail: 'resume token is unknown, expired or already used; start again without it' };
    }
    taken = { token: start.resume_token, entry: result.entry };
  }
  const restored = taken?.entry.snapshot;

  const settings: SessionSettings = restored
    ? mergeOnResume(restored.settings, mode, start.audio, tools?.ok ? tools.tools : undefined)
    : resolveSettings(mode, start.audio, tools?.ok ? tools.tools : [], { greeting: config.GREETING, voice: config.DEFAULT_VOICE, temperature: config.DEFAULT_TEMPERATURE });
  // A refusal after the take gives the conversation back: the token works again once fixed.
  const refuse = async (code: WsErrorCode, detail: string): Promise<PrepareResult> => {
    if (taken) await server.stores.stash.giveBack(taken.token, taken.entry);
    return { ok: false, code, detail };
  };
  const badChoice = checkToolChoice(settings.toolChoice, settings.tools, { webSearch: settings.webSearch, endCall: settings.endCall, serverTools: server.serverTools.names() });
  if (badChoice) return refuse('invalid_tools', badChoice);
  if (settings.modality === 'voice' && !start.audio) return refuse('invalid_start_frame', 'audio is required for a voice session');
  if (settings.webSearch && !server.search) return refuse('web_search_unavailable', 'mode.web_search needs a search backend: the server has no SEARCH_URL configured');
  if (settings.modality === 'voice' && !server.voice.ok) {
    return refuse('voice_unavailable', `voice sessions are not available on this server: ${server.voice.reason}; text sessions still work`);
  }
  if (!hooks.admit()) return refuse('server_busy', 'the server is at MAX_SESSIONS; retry later');

  const build = (transport: Transport, media?: SessionDeps['media'], observer?: SessionObserver): Session => {
  const deps: SessionDeps = {
    transport,
    ...(media ? { media } : {}),
    ...(observer ? { observer } : {}),
    llm: server.llm,
    voices: server.voices,
    log: server.log.child({ session_id: start.session_id, account: credential.account }),
    ...(server.search ? { search: server.search } : {}),
    tools: {
      defaultTimeoutMs: config.TOOL_TIMEOUT_MS,
      deferredTimeoutMs: config.DEFERRED_TIMEOUT_S * 1000,
      permissionTimeoutMs: config.PERMISSION_TIMEOUT_S * 1000,
      deepModel: config.LLM_DEEP_MODEL,
      interactions: { INTERACTION_QUEUE_DEADLINE_S: config.INTERACTION_QUEUE_DEADLINE_S, INTERACTION_QUEUE_DEADLINE_ROUNDS: config.INTERACTION_QUEUE_DEADLINE_ROUNDS },
      server: { tools: server.serverTools, session: { id: start.session_id, account: credential.account } },
    },
    endCallGraceMs: config.END_CALL_GRACE_MS,
    historyMaxChars: config.HISTORY_MAX_CHARS,
    signOff: config.WRAP_UP_SIGN_OFF,
    ...(settings.modality === 'voice' && server.voice.ok ? { voice: server.voice } : {}),
    ...server.usage.sessionDeps(credential.account, start.session_id),
    onTurnEnd: () => hooks.onTurnEnd(),
  };
  const session = new Session(start.session_id, settings, deps);
  if (restored) session.restore(restored);
  return session;
  };
  // Counted once the start will run (a later refusal gave the token back: not a resume).
  if (taken) resumes.inc({ outcome: 'resumed' });
  return { ok: true, credential, settings, resumed: taken !== undefined, taken, maxSessions, build };
}

/** A start that took a conversation ended before its session began: the token works again. */
export function giveBackUntaken(server: ServerContext, untaken: NonNullable<PreparedSession['taken']>): void {
  const given = server.stores.stash.giveBack(untaken.token, untaken.entry).catch((error: unknown) =>
    server.log.warn({ err: error instanceof Error ? error.message : String(error), session_id: untaken.entry.sessionId }, 'giving a taken conversation back failed: it is lost'),
  );
  server.sessions.track(given);
}
