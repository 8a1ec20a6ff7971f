import type { Config } from '../config.ts';
import type { SessionRegistry } from '../session-registry.ts';

/**
 * Of DRAIN_TIMEOUT_MS, what the closes themselves keep (stashing every conversation, close
 * handshakes): half of it, at most 5 s. A second was not enough for 60 sessions on a loaded
 * machine in the rolling-restart test (the drain hit its bound and conversations were cut).
 */
const CLOSING_RESERVE_MS = 5000;

/**
 * How long ahead a drain warns its sessions: the full CLOSING_NOTICE_S when DRAIN_TIMEOUT_MS
 * leaves room for it and the closes, otherwise what DRAIN_TIMEOUT_MS leaves (with the default
 * 5 s, 2.5 s): the notice always says the true time left.
 */
export function restartNoticeMs(config: Pick<Config, 'CLOSING_NOTICE_S' | 'DRAIN_TIMEOUT_MS'>): number {
  const room = config.DRAIN_TIMEOUT_MS - Math.min(CLOSING_RESERVE_MS, config.DRAIN_TIMEOUT_MS / 2);
  return Math.max(0, Math.min(config.CLOSING_NOTICE_S * 1000, room));
}

/**
 * The drain's warning: every live session hears session_closing_soon (reason restart, resumable)
 * with the time left, and keeps talking until then (a reply in flight can finish). Resolves when
 * that time is up, or sooner once every session has gone.
 */
export async function announceRestart(sessions: SessionRegistry, noticeMs: number): Promise<void> {
  const live = sessions.all();
  for (const session of live) session.warnRestart(noticeMs);
  if (live.length === 0 || noticeMs === 0) return;
  const deadline = Date.now() + noticeMs;
  while (sessions.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, Math.min(50, deadline - Date.now())));
}
