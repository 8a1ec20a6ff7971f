import { SESSION_ID_PATTERN } from '../../session/protocol/limits.ts';
import { libraryError, type RealtimeError } from './errors.ts';

/**
 * What a replacement client needs to resume a conversation after a page reload: the session id
 * and the latest single-use resume token. A short-lived credential: keep it in tab-scoped
 * storage (sessionStorage) and send it nowhere but back through importResumeState().
 */
export interface ResumeState {
  /** Shape version of this object. */
  version: 1;
  sessionId: string;
  resumeToken: string;
  /** When the token was issued (ms since the epoch); the server keeps a dropped call ~150 s. */
  savedAt: number;
  /** The modality of the session, so the replacement can check it rebuilt the same mode. */
  modality: 'voice' | 'text';
}

export function createResumeState(sessionId: string, resumeToken: string, modality: 'voice' | 'text', now = Date.now()): ResumeState {
  return { version: 1, sessionId, resumeToken, savedAt: now, modality };
}

/** Validates an imported state (it may come from storage, i.e. from anywhere); throws RealtimeError. */
export function parseResumeState(value: unknown): ResumeState {
  const v = value as Partial<ResumeState> | null;
  const ok =
    typeof v === 'object' &&
    v !== null &&
    v.version === 1 &&
    typeof v.sessionId === 'string' &&
    SESSION_ID_PATTERN.test(v.sessionId) &&
    typeof v.resumeToken === 'string' &&
    v.resumeToken.length > 0 &&
    v.resumeToken.length <= 512 &&
    typeof v.savedAt === 'number' &&
    (v.modality === 'voice' || v.modality === 'text');
  if (!ok) throw libraryError('resume_state_rejected', 'not a resume state from exportResumeState()');
  return { version: 1, sessionId: v.sessionId!, resumeToken: v.resumeToken!, savedAt: v.savedAt!, modality: v.modality! };
}

/**
 * An import must fit the client: the same modality (the app rebuilds the same mode) and, when
 * the client was given a session id, that id (its scoped key is bound to it). A client with a
 * generated id adopts the state's id.
 */
export function checkImport(value: unknown, client: { modality: 'voice' | 'text'; sessionId: string | undefined }): ResumeState {
  const state = parseResumeState(value);
  if (state.modality !== client.modality) {
    throw libraryError('resume_state_rejected', `the state is for a ${state.modality} session; rebuild the same mode`);
  }
  if (client.sessionId !== undefined && state.sessionId !== client.sessionId) {
    throw libraryError('resume_state_rejected', `the state is for session ${state.sessionId}, this client is ${client.sessionId}`);
  }
  return state;
}

/** Where the keeper's news goes: the resume_state and resume_failed events. */
export interface ResumeEvents {
  changed(state: ResumeState | null): void;
  refused(error: { code: string; retryable: boolean; detail: string }): void;
}

/**
 * A link's current resume state, and the events that track it: resume_state with each new token
 * (and null when it is gone), resume_failed when the server refused it.
 */
export class ResumeKeeper {
  private state: ResumeState | undefined;

  constructor(private readonly events: ResumeEvents) {}

  get token(): string | undefined {
    return this.state?.resumeToken;
  }

  /** A copy for the app, or null without a token. */
  get current(): ResumeState | null {
    return this.state ? { ...this.state } : null;
  }

  /** Before a connect: the state a replacement client imported (null forgets it). */
  adopt(state: ResumeState | null): void {
    this.state = state ?? undefined;
  }

  /** ready: its token replaces the old one; true when this ready resumed a conversation. */
  ready(sessionId: string, token: string, modality: 'voice' | 'text'): boolean {
    const resumed = this.state !== undefined;
    this.state = createResumeState(sessionId, token, modality, Date.now());
    this.events.changed({ ...this.state });
    return resumed;
  }

  refused(error: RealtimeError): void {
    this.events.refused({ code: error.code, retryable: error.retryable, detail: error.message });
    this.clear();
  }

  clear(): void {
    if (!this.state) return;
    this.state = undefined;
    this.events.changed(null);
  }
}
