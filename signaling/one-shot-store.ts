import { createReadStream } from 'node:fs';
import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export type ReportKind = 'feedback' | 'client_error';

/** What GET /api/v1/feedback asks for: one account's reports, newest first. */
export interface ReportFilter {
  account: string;
  from?: string | undefined;
  to?: string | undefined;
  sessionId?: string | undefined;
  kind?: ReportKind | undefined;
  limit: number;
}

/**
 * Feedback and client error reports, one JSON object per line under DATA_DIR
 * (feedback.jsonl, client-errors.jsonl): append-only, easy to ship to any log pipeline.
 */
export class OneShotStore {
  constructor(private readonly dataDir: string) {}

  async append(kind: ReportKind, record: Record<string, unknown>): Promise<void> {
    await mkdir(this.dataDir, { recursive: true });
    await appendFile(this.fileOf(kind), `${JSON.stringify(record)}\n`, 'utf8');
  }

  /** One account's reports, each with its `kind`, newest first; `truncated` when more matched than `limit`. */
  async list(filter: ReportFilter): Promise<{ reports: Array<Record<string, unknown>>; truncated: boolean }> {
    const kinds: ReportKind[] = filter.kind ? [filter.kind] : ['feedback', 'client_error'];
    const found: Array<Record<string, unknown>> = [];
    for (const kind of kinds) {
      for await (const record of this.records(kind)) {
        if (record.account !== filter.account) continue;
        const at = String(record.received_at ?? '');
        if ((filter.from !== undefined && at < filter.from) || (filter.to !== undefined && at >= filter.to)) continue;
        if (filter.sessionId !== undefined && record.session_id !== filter.sessionId) continue;
        const { account: _account, ...report } = record;
        found.push({ kind, ...report });
      }
    }
    found.sort((a, b) => String(b.received_at).localeCompare(String(a.received_at)));
    return { reports: found.slice(0, filter.limit), truncated: found.length > filter.limit };
  }

  private fileOf(kind: ReportKind): string {
    return join(this.dataDir, kind === 'feedback' ? 'feedback.jsonl' : 'client-errors.jsonl');
  }

  /** The file's records; a line that is not a JSON object (a torn write) is skipped. */
  private async *records(kind: ReportKind): AsyncGenerator<Record<string, unknown>> {
    const input = createReadStream(this.fileOf(kind), { encoding: 'utf8' });
    const opened = await new Promise<boolean>((resolve) => {
      input.once('open', () => resolve(true));
      input.once('error', () => resolve(false));
    });
    if (!opened) return;
    for await (const line of createInterface({ input, crlfDelay: Infinity })) {
      try {
        const record: unknown = JSON.parse(line);
        if (typeof record === 'object' && record !== null && !Array.isArray(record)) yield record as Record<string, unknown>;
      } catch {
        // skipped
      }
    }
  }
}
