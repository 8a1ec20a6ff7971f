import { randomId } from '../../session/ids.ts';
import type { StashOwner } from '../../session/resume/resume-stash.ts';
import type { SessionSnapshot } from '../../session/resume/snapshot.ts';
import type { Session } from '../../session/session.ts';
import type { ServerContext } from '../context.ts';
import type { LiveSession } from '../stores/live-sessions.ts';

let leases = 0;

/** A start refused for the account's concurrent sessions may try again this soon. */
const CONCURRENCY_RETRY_MS = 2000;

/**
 * What the deployment knows of one live conversation: its lease in the live-session registry and
 * its resume-stash entry under the token its ready frame carries. With a shared stash the entry
 * is written through (at ready and at every turn end), so a process that dies loses at most the
 * turn in flight; a drop or a server-side close stashes the final state; a clean end removes it.
 */
export class LiveRecord {
  readonly token = randomId('rt', 32);
  private state: 'live' | 'stashed' | 'ended' | 'taken' = 'live';
  private readonly lease: LiveSession;

  constructor(
    private readonly server: ServerContext,
    private readonly owner: StashOwner,
    kind: { modality: LiveSession['modality']; transport: LiveSession['transport'] },
    /** The token was used by another connection: this one must end. */
    private readonly onTaken: () => void,
  ) {
    const instance = server.stores.live.instance;
    this.lease = { id: `${instance}/${(leases += 1)}`, sessionId: owner.sessionId, account: owner.account, instance, startedAt: new Date().toISOString(), ...kind };
  }

  get stashed(): boolean {
    return this.state !== 'live';
  }

  /**
   * Joins the live-session registry unless the account already holds `maxPerAccount` live
   * sessions there (0: no limit), atomically across processes.
   */
  async register(maxPerAccount: number): Promise<'acquired' | { detail: string; retryAfterMs: number }> {
    if ((await this.server.stores.live.acquire(this.lease, maxPerAccount)) === 'acquired') return 'acquired';
    // A session of the account may end any moment: worth trying again soon.
    return { detail: `the account already has ${maxPerAccount} live sessions, its limit`, retryAfterMs: CONCURRENCY_RETRY_MS };
  }

  release(): void {
    void this.server.stores.live.release(this.lease.id).catch((error: unknown) => this.warn('leaving the live-session registry failed', error));
  }

  /**
   * Write-through: the conversation as it stands, while it goes on. A shared stash serializes
   * the entry before save() returns, so the session's live objects are passed, not copies.
   */
  checkpoint(session: Session): void {
    if (this.state !== 'live' || !this.server.stores.stash.shared) return;
    void this.write(session.view());
  }

  /** The connection is ending without a clean close: stop the session and keep it for resume. */
  stash(session: Session): Promise<void> {
    if (this.state !== 'live') {
      session.close();
      return Promise.resolve();
    }
    this.state = 'stashed';
    // detach lets the reply's tool round record the results that had arrived before it snapshots.
    const stashed = session.detach().then(
      (snapshot) => this.write(snapshot),
      (error: unknown) => {
        this.warn('capturing the conversation for resume failed', error);
        session.close();
      },
    );
    this.server.sessions.track(stashed);
    return stashed;
  }

  /** A clean end (close 1000): nothing to resume, so a written-through entry goes too. */
  end(session: Session): void {
    session.close();
    if (this.state === 'live' && this.server.stores.stash.shared) {
      this.server.sessions.track(this.server.stores.stash.discard(this.token).catch((error: unknown) => this.warn('removing the stash entry failed', error)));
    }
    this.state = 'ended';
  }

  private write(snapshot: SessionSnapshot): Promise<void> {
    const written = this.server.stores.stash.save(this.token, { ...this.owner, snapshot }).then(
      (result) => {
        if (result !== 'taken' || this.state !== 'live') return;
        this.state = 'taken';
        this.onTaken();
      },
      (error: unknown) => this.warn('writing the conversation to the resume stash failed', error),
    );
    this.server.sessions.track(written);
    return written;
  }

  private warn(msg: string, error: unknown): void {
    this.server.log.warn({ err: error instanceof Error ? error.message : String(error), session_id: this.owner.sessionId }, msg);
  }
}
