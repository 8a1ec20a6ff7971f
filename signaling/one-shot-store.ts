import { createReadStream } from 'node:fs';
import { appendFile, mkdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export type ReportKind = 'feedback' | 'client_error';

/** One stored report: its fields as received (never the key) plus who sent it and when. */
export interface ReportRecord {
  id: string;
  received_at: string;
  account: string;
  session_id: string;
  [field: string]: unknown;
}

/** What GET /api/v1/feedback asks for: one account's reports, newest first. */
export interface ReportFilter {
  account: string;
  from?: string | undefined;
  to?: string | undefined;
  sessionId?: string | undefined;
  kind?: ReportKind | undefined;
  limit: number;
}

/** Listed reports: each with its `kind` and without `account`; `truncated` when more matched than the limit. */
export interface ReportListing {
  reports: Array<Record<string, unknown>>;
  truncated: boolean;
}

/**
 * Where feedback and client-error reports go. An append that resolves is stored for good; one
 * that rejects (StoreUnavailableError) was not stored, and the sender is told so.
 */
export interface ReportStore {
  append(kind: ReportKind, record: ReportRecord): Promise<void>;
  list(filter: ReportFilter): Promise<ReportListing>;
}

/**
 * The embedded default: one JSON object per line under DATA_DIR (feedback.jsonl,
 * client-errors.jsonl), append-only, easy to ship to any log pipeline. Each file is bounded:
 * once a report would take it past `maxBytes` it is rotated to `<name>.1` (replacing the
 * previous one), so the reports of one kind never hold more than twice `maxBytes` on disk.
 */
export class JsonLinesReportStore implements ReportStore {
  /** Appends run one at a time, so a rotation never races another append. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly dataDir: string,
    private readonly maxBytes: number,
  ) {}

  append(kind: ReportKind, record: ReportRecord): Promise<void> {
    const write = this.queue.then(() => this.write(kind, record));
    this.queue = write.catch(() => undefined);
    return write;
  }

  /** Reads the rotated file and the current one (a listing never waits on appends). */
  async list(filter: ReportFilter): Promise<ReportListing> {
    const kinds: ReportKind[] = filter.kind ? [filter.kind] : ['feedback', 'client_error'];
    const found: Array<Record<string, unknown>> = [];
    for (const kind of kinds) {
      for (const file of [`${this.fileOf(kind)}.1`, this.fileOf(kind)]) {
        for await (const record of records(file)) {
          if (record.account !== filter.account || !matches(filter, String(record.received_at ?? ''), record.session_id)) continue;
          const { account: _account, ...report } = record;
          found.push({ kind, ...report });
        }
      }
    }
    found.sort((a, b) => String(b.received_at).localeCompare(String(a.received_at)));
    return { reports: found.slice(0, filter.limit), truncated: found.length > filter.limit };
  }

  private fileOf(kind: ReportKind): string {
    return join(this.dataDir, kind === 'feedback' ? 'feedback.jsonl' : 'client-errors.jsonl');
  }

  private async write(kind: ReportKind, record: ReportRecord): Promise<void> {
    await mkdir(this.dataDir, { recursive: true });
    const file = this.fileOf(kind);
    const line = `${JSON.stringify(record)}\n`;
    const size = await stat(file).then((s) => s.size, () => 0);
    if (size > 0 && size + Buffer.byteLength(line) > this.maxBytes) await rename(file, `${file}.1`);
    await appendFile(file, line, 'utf8');
  }
}

function matches(filter: ReportFilter, receivedAt: string, sessionId: unknown): boolean {
  if (filter.from !== undefined && receivedAt < filter.from) return false;
  if (filter.to !== undefined && receivedAt >= filter.to) return false;
  return filter.sessionId === undefined || sessionId === filter.sessionId;
}

/** A file's records; a missing file has none, and a line that is not a JSON object (a torn write) is skipped. */
async function* records(file: string): AsyncGenerator<Record<string, unknown>> {
  const input = createReadStream(file, { encoding: 'utf8' });
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
