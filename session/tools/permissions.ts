import type { ServerFrame } from '../protocol/server.ts';
import { randomId } from '../ids.ts';

/** A spoken or typed answer to a pending permission, recognised by its first words. */
const YES = /^(yes|yeah|yep|sure|ok|okay|go ahead|please do|do it|approve|approved|allow)\b/i;
const NO = /^(no|nope|don't|do not|cancel|stop|deny|denied|refuse)\b/i;

export function spokenAnswer(text: string): boolean | undefined {
  const clean = text.trim().replace(/^[^A-Za-z]+/, '');
  if (YES.test(clean)) return true;
  if (NO.test(clean)) return false;
  return undefined;
}

interface Pending {
  tool: string;
  resolve(approved: boolean): void;
  timer: NodeJS.Timeout;
}

/**
 * Held calls of requires_permission tools (SPEC "Permission"): pending until the user approves
 * or refuses (confirm_tool_permission, or a spoken or typed yes/no), or the hold expires as a
 * refusal. A held call never runs without an approval.
 */
export class Permissions {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly send: (frame: ServerFrame) => void,
    private readonly timeoutMs: number,
  ) {}

  get waiting(): boolean {
    return this.pending.size > 0;
  }

  /** Resolves true when approved; a turn that stops waiting refuses the hold. */
  request(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<boolean> {
    const id = randomId('appr', 6);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.decide(id, false), this.timeoutMs);
      this.pending.set(id, { tool, resolve, timer });
      this.send({ type: 'permission_pending', id, tool, arguments: args });
      signal.addEventListener('abort', () => this.decide(id, false), { once: true });
    });
  }

  confirm(approvalId: string, approved: boolean): boolean {
    return this.decide(approvalId, approved);
  }

  /** A user turn while a hold is pending: a clear yes or no answers the oldest hold. */
  answer(text: string): boolean {
    const first = this.pending.keys().next();
    if (first.done) return false;
    const verdict = spokenAnswer(text);
    if (verdict === undefined) return false;
    return this.decide(first.value, verdict);
  }

  close(): void {
    for (const id of [...this.pending.keys()]) this.decide(id, false);
  }

  private decide(id: string, approved: boolean): boolean {
    const entry = this.pending.get(id);
    if (!entry) return false;
    this.pending.delete(id);
    clearTimeout(entry.timer);
    this.send({ type: approved ? 'permission_approved' : 'permission_refused', id, tool: entry.tool });
    entry.resolve(approved);
    return true;
  }
}
