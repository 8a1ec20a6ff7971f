import type { WsErrorCode } from '../../session/protocol/errors.ts';
import type { StartFrame } from '../../session/protocol/start.ts';
import type { ServerContext } from '../context.ts';
import type { HandshakeAuth } from './authenticate.ts';

/** What a refused start does to its socket: a fatal error that closes it, or an answer it survives. */
export type Refusal = { fatal: boolean; code: WsErrorCode; detail: string };

/**
 * The failed-attempt bookkeeping of one socket. A refused key counts against the client's address
 * (signaling/failed-attempts.ts), whatever frame carried it; a refused resume counts too and
 * leaves the socket open for a fresh start, RESUME_FAILURES_PER_CONNECTION times at most.
 */
export class StartRefusals {
  private failedResumes = 0;

  constructor(
    private readonly server: ServerContext,
    private readonly handshake: HandshakeAuth | undefined,
    /** The client's address, for the failed-attempt counts. */
    private readonly address: string,
  ) {}

  /** How long this address must wait before it may try again; undefined when it may now. */
  waitMs(): Promise<number | undefined> {
    return this.server.attempts.refusedFor(this.address);
  }

  /** A key that was not accepted (start frame, handshake or a report's api_key). */
  keyRefused(detail: string, apiKey: string | undefined, sessionId: string): Promise<void> {
    return this.server.attempts.failed(this.address, 'key', detail, apiKey ?? this.handshake?.token, sessionId);
  }

  async startRefused(code: WsErrorCode, detail: string, start: StartFrame): Promise<Refusal> {
    if (code === 'unauthorized') await this.keyRefused(detail, start.api_key, start.session_id);
    if (code !== 'resume_failed') return { fatal: true, code, detail };
    await this.server.attempts.failed(this.address, 'resume', detail, start.resume_token, start.session_id);
    this.failedResumes += 1;
    if (this.failedResumes >= this.server.config.RESUME_FAILURES_PER_CONNECTION) {
      return { fatal: true, code: 'too_many_attempts', detail: `${this.failedResumes} resume attempts failed on this socket; open a new one to start fresh` };
    }
    return { fatal: false, code, detail };
  }
}
