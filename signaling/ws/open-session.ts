import { Session } from '../../session/session.ts';
import type { SessionDeps } from '../../session/session-deps.ts';
import { mergeOnResume, resolveSettings, type SessionSettings } from '../../session/settings.ts';
import type { SessionSnapshot } from '../../session/resume/snapshot.ts';
import type { Transport } from '../../session/transport.ts';
import type { ServerContext } from '../context.ts';
import type { WsErrorCode } from '../../session/protocol/errors.ts';
import type { StartFrame } from '../../session/protocol/start.ts';
import { checkToolChoice, validateTools } from '../../session/protocol/tools.ts';
import type { Credential } from '../keys/credentials.ts';
import { authenticateStart, type HandshakeAuth } from './authenticate.ts';
import { admitSession, type Refusal } from '../usage/admission.ts';

export interface PreparedSession {
  ok: true;
  credential: Credential;
  settings: SessionSettings;
  resumed: boolean;
  /** Gives back the account's concurrent-session slot this start holds (once; the connection calls it when it ends). */
  release(): void;
  /** Builds the session on its transport; `media` overrides the pipeline's formats (WebRTC). */
  build(transport: Transport, media?: SessionDeps['media']): Session;
}

export type PrepareResult = PreparedSession | { ok: false; code: WsErrorCode; detail: string; retryAfterMs?: number; limit?: Refusal['limit'] };

/**
 * Everything between a valid start frame and a live Session: feature checks, authentication,
 * the resume token, and the session's dependencies. Checks run in the order a client can fix
 * them; `resume_failed` is the one refusal that leaves the socket open for a fresh start.
 */
export async function prepareSession(server: ServerContext, handshake: HandshakeAuth | undefined, start: StartFrame): Promise<PrepareResult> {
  const { config } = server;
  const mode = start.mode;
  const tools = mode.tools === undefined ? undefined : validateTools(mode.tools, { webSearch: mode.web_search ?? false, endCall: mode.end_call ?? false });
  if (tools && !tools.ok) return { ok: false, code: 'invalid_tools', detail: tools.detail };
  const auth = authenticateStart(server, handshake, start.api_key, start.session_id);
  if (!auth.ok) return { ok: false, code: 'unauthorized', detail: auth.detail };
  if (mode.voice !== undefined && !server.voices.find(mode.voice)) return { ok: false, code: 'invalid_start_frame', detail: `mode.voice: unknown voice "${mode.voice}"` };
  const admitted = await admitSession(server.usage, auth.credential.account, server.log);
  if (!admitted.ok) return admitted;
  // Checked before anything is taken: a refused start leaves a resume token as it was.
  const prepared = await prepareAdmitted(server, start, auth.credential, tools, admitted.release);
  if (!prepared.ok) admitted.release();
  return prepared;
}

/** The rest of a start once the account may open a session: resume, settings, features, dependencies. */
async function prepareAdmitted(
  server: ServerContext,
  start: StartFrame,
  credential: Credential,
  tools: ReturnType<typeof validateTools> | undefined,
  release: () => void,
): Promise<PrepareResult> {
  const { config } = server;
  const mode = start.mode;

  let restored: SessionSnapshot | undefined;
  if (start.resume_token !== undefined) {
    const taken = await server.stash.take(start.resume_token);
    if (taken && (taken.entry.account !== credential.account || taken.entry.sessionId !== start.session_id)) {
      // Not this caller's conversation: refuse, and leave it for its owner.
      await server.stash.put(start.resume_token, taken.entry, Math.max(1, taken.expiresAt - Date.now()));
      return { ok: false, code: 'resume_failed', detail: 'resume token belongs to another account or session; start again without it' };
    }
    if (!taken) return { ok: false, code: 'resume_failed', detail: 'resume token is unknown, expired or already used; start again without it' };
    restored = taken.entry.snapshot;
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

  const build = (transport: Transport, media?: SessionDeps['media']): Session => {
  const deps: SessionDeps = {
    transport,
    ...(media ? { media } : {}),
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
    },
    endCallGraceMs: config.END_CALL_GRACE_MS,
    signOff: config.WRAP_UP_SIGN_OFF,
    ...(settings.modality === 'voice' && server.voice.ok ? { voice: server.voice } : {}),
    ...server.usage.sessionDeps(credential.account, start.session_id),
  };
  const session = new Session(start.session_id, settings, deps);
  if (restored) session.restore(restored);
  return session;
  };
  return { ok: true, credential: credential, settings, resumed: restored !== undefined, release, build };
}
