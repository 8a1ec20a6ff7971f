import type { ServerContext } from './context.ts';
import { announceRestart, restartNoticeMs } from './usage/restart-notice.ts';

/**
 * SIGTERM (or stop()): readiness turns false at once (`draining`: /readyz and /healthz answer
 * 503, new sessions get server_restarting), every live session hears session_closing_soon
 * (reason restart) as far ahead as DRAIN_TIMEOUT_MS allows, then every live conversation is stashed and then closed
 * resumable with server_restarting (1012), and the drain waits for the closes and the stash
 * writes, bounded by DRAIN_TIMEOUT_MS. Behind a load balancer the clients reconnect and resume on
 * another process.
 */
export async function drainSessions(context: ServerContext, closingSockets: () => number): Promise<void> {
  context.draining = true;
  context.log.info({ sessions: context.sessions.size }, 'draining');
  const noticeMs = restartNoticeMs(context.config);
  await announceRestart(context.sessions, noticeMs);
  for (const session of context.sessions.all()) session.shutdown('server_restarting');
  // Wait for the close handshakes too: terminating a socket whose error frame and close frame
  // are still queued behind a backlog would cut it with 1006 and no reason.
  // A start under way when the drain began refuses itself (giving back what it took) when it ends.
  await waitUntil(() => context.sessions.size === 0 && context.sessions.starting === 0 && closingSockets() === 0, context.config.DRAIN_TIMEOUT_MS - noticeMs);
  await context.sessions.writesSettled();
}

/**
 * Upkeep of a shared stash's written-through entries: every third of the resume window the live
 * conversations' entries start their window again (so an idle conversation is still resumable
 * after a crash), and when Redis answers again after an outage every live conversation writes
 * itself through again (Redis may have come back empty). Returns the stop function.
 */
export function keepWrittenThrough(context: ServerContext): () => void {
  const { stores, sessions } = context;
  if (!stores.stash.shared) return () => undefined;
  const timer = setInterval(() => {
    const tokens = sessions.all().flatMap((s) => (s.resumeToken ? [s.resumeToken] : []));
    void stores.stash.keepAlive(tokens).catch(() => undefined);
  }, (context.config.RESUME_TTL_S * 1000) / 3);
  timer.unref();
  stores.onSharedStateRecovered(() => {
    for (const session of sessions.all()) session.checkpoint();
  });
  return () => clearInterval(timer);
}

async function waitUntil(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}
