import { WsTestClient } from './ws-test-client.ts';

/**
 * A test client that does what the browser library does across a restart: after a socket
 * closes with anything but 1000, it connects again (through a load balancer, to whichever
 * process answers) and resumes with its latest resume token, retrying with a jittered backoff
 * while the refusal is retryable (server_restarting, store_unavailable, a cut socket). A
 * resume_failed is a lost conversation: it throws.
 */
export class ResumingClient {
  /** The live connection (the latest one). */
  client!: WsTestClient;
  token: string | undefined;
  /** Connections that resumed (the first connection is not counted). */
  resumes = 0;

  constructor(
    private readonly url: string,
    /** The start frame's fields without type and resume_token. */
    private readonly start: Record<string, unknown>,
    private readonly patienceMs = 30_000,
  ) {}

  get sessionId(): string {
    return String(this.start.session_id);
  }

  /** Connects (or resumes) and resolves with the socket that got ready. */
  async connect(): Promise<WsTestClient> {
    const deadline = Date.now() + this.patienceMs;
    let last = 'no attempt';
    while (Date.now() < deadline) {
      const client = await WsTestClient.open(this.url).catch((error: Error) => {
        last = error.message;
        return undefined;
      });
      if (client) {
        client.send({ type: 'start', ...this.start, ...(this.token ? { resume_token: this.token } : {}) });
        const answer = await Promise.race([client.waitFor('ready', () => true, 10_000), client.waitFor('error', () => true, 10_000)]).catch((error: Error) => error);
        if (!(answer instanceof Error) && answer.type === 'ready') {
          if (this.token) this.resumes += 1;
          this.client = client;
          this.token = answer.resume_token;
          return client;
        }
        client.ws.terminate();
        if (!(answer instanceof Error) && answer.type === 'error' && !answer.retryable) {
          throw new Error(`${this.sessionId}: ${answer.code}: ${answer.detail}`);
        }
        last = answer instanceof Error ? answer.message : `${answer.code} (retryable)`;
      }
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
    throw new Error(`${this.sessionId}: could not reconnect: ${last}`);
  }
}
