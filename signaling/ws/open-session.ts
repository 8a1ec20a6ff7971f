import { Session } from '../../session/session.ts';
import type { SessionDeps } from '../../session/session-deps.ts';
import { mergeOnResume, resolveSettings, type SessionSettings } from '../../session/settings.ts';
import type { SessionSnapshot, StashEntry } from '../../session/resume/snapshot.ts';
import type { Transport } from '../../session/transport.ts';
import type { ServerContext } from '../context.ts';
import type { WsErrorCode } from '../../session/protocol/errors.ts';
import type { StartFrame } from '../../session/protocol/start.ts';
import { checkToolChoice, validateTools } from '../../session/protocol/tools.ts';
import type { Credential } from '../keys/credentials.ts';
import { authenticateStart, type HandshakeAuth } from './authenticate.ts';

export interface PreparedSession {
  ok: true;
  credential: Credential;
  settings: SessionSettings;
  resumed: boolean;
  /** The stash entry this start took, so it can be put back if the socket goes before the session begins. */
  resumedFrom: { token: string; entry: StashEntry; expiresAt: number } | undefined;
  /** Builds the session on its transport; `media` overrides the pipeline's formats (WebRTC). */
  build(transport: Transport, media?: SessionDeps['media']): Session;
}

export type PrepareResult = PreparedSession | { ok: false; code: WsErrorCode; detail: string };

export interface Admission {
  /** Takes a live-session slot; false when the process is full (server_busy). */
  admit(): boolean;
}

/**
 * Everything between a valid start frame and a live Session: feature checks, authentication,
 * capacity, the resume token, and the session's dependencies. Checks run in the order a client
 * can fix them, and every one of them runs before a resume token is spent: the stash entry is
 * only read while the start is checked, and taken last, so a refused start (even a retryable
 * server_busy) leaves the conversation resumable. `resume_failed` is the one refusal that
 * leaves the socket open for a fresh start.
 */
export async function prepareSession(server: ServerContext, handshake: HandshakeAuth | undefined, start: StartFrame, admission: Admission): Promise<PrepareResult> {
  const { config } = server;
  const mode = start.mode;
  const tools = mode.tools === undefined ? undefined : validateTools(mode.tools, { webSearch: mode.web_search ?? false, endCall: mode.end_call ?? false });
  if (tools && !tools.ok) return { ok: false, code: 'invalid_tools', detail: tools.detail };
  const auth = authenticateStart(server, handshake, start.api_key, start.session_id);
  if (!auth.ok) return { ok: false, code: 'unauthorized', detail: auth.detail };
  if (mode.voice !== undefined && !server.voices.find(mode.voice)) return { ok: false, code: 'invalid_start_frame', detail: `mode.voice: unknown voice "${mode.voice}"` };

  let restored: SessionSnapshot | undefined;
  let found: { entry: StashEntry; expiresAt: number } | undefined;
  if (start.resume_token !== undefined) {
    found = await server.stash.peek(start.resume_token);
    if (!found) return { ok: false, code: 'resume_failed', detail: 'resume token is unknown, expired or already used; start again without it' };
    // Not this caller's conversation: refuse, and leave it for its owner.
    if (found.entry.account !== auth.credential.account || found.entry.sessionId !== start.session_id) {
      return { ok: false, code: 'resume_failed', detail: 'resume token belongs to another account or session; start again without it' };
    }
    restored = found.entry.snapshot;
  }

  const settings: SessionSettings = restored
    ? mergeOnResume(restored.settings, mode, start.audio, tools?.ok ? tools.tools : undefined)
    : resolveSettings(mode, start.audio, tools?.ok ? tools.tools : [], { greeting: config.GREETING, voice: config.DEFAULT_VOICE, temperature: config.DEFAULT_TEMPERATURE });
  const badChoice = checkToolChoice(settings.toolChoice, settings.tools, { webSearch: settings.webSearch, endCall: settings.endCall });
  if (badChoice) return { ok: false, code: 'invalid_tools', detail: badChoice };
  if (settings.modality === 'voice' && !start.audio) return { ok: false, code: 'invalid_start_frame', detail: 'audio is required for a voice session' };
  if (settings.webSearch && !server.search) return { ok: false, code: 'web_search_unavailable', detail: 'mode.web_search needs a search backend: the server has no SEARCH_URL configured' };
  if (settings.modality === 'voice' && !server.voice.ok) {
    return { ok: false, code: 'voice_unavailable', detail: `voice sessions are not available on this server: ${server.voice.reason}; text sessions still work` };
  }
  if (!admission.admit()) return { ok: false, code: 'server_busy', detail: 'the server is at MAX_SESSIONS; retry later' };

  // Last: the token is spent only by a start that will run. Another start may have taken it
  // since it was read (single use): that one won.
  if (start.resume_token !== undefined && !(await server.stash.take(start.resume_token))) {
    return { ok: false, code: 'resume_failed', detail: 'resume token was used by another start a moment ago; start again without it' };
  }

  const build = (transport: Transport, media?: SessionDeps['media']): Session => {
  const deps: SessionDeps = {
    transport,
    ...(media ? { media } : {}),
    llm: server.llm,
    voices: server.voices,
    log: server.log.child({ session_id: start.session_id, account: auth.credential.account }),
    ...(server.search ? { search: server.search } : {}),
    tools: {
      defaultTimeoutMs: config.TOOL_TIMEOUT_MS,
      deferredTimeoutMs: config.DEFERRED_TIMEOUT_S * 1000,
      permissionTimeoutMs: config.PERMISSION_TIMEOUT_S * 1000,
      deepModel: config.LLM_DEEP_MODEL,
      interactions: { INTERACTION_QUEUE_DEADLINE_S: config.INTERACTION_QUEUE_DEADLINE_S, INTERACTION_QUEUE_DEADLINE_ROUNDS: config.INTERACTION_QUEUE_DEADLINE_ROUNDS },
    },
    endCallGraceMs: config.END_CALL_GRACE_MS,
    historyMaxChars: config.HISTORY_MAX_CHARS,
    signOff: config.WRAP_UP_SIGN_OFF,
    ...(settings.modality === 'voice' && server.voice.ok ? { voice: server.voice } : {}),
  };
  const session = new Session(start.session_id, settings, deps);
  if (restored) session.restore(restored);
  return session;
  };
  const resumedFrom = start.resume_token !== undefined && found ? { token: start.resume_token, entry: found.entry, expiresAt: found.expiresAt } : undefined;
  return { ok: true, credential: auth.credential, settings, resumed: restored !== undefined, resumedFrom, build };
}
