import { appendFile, mkdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';

export type ReportKind = 'feedback' | 'client_error';

/** One stored report: its fields as received (never the key) plus who sent it and when. */
export interface ReportRecord {
  id: string;
  received_at: string;
  account: string;
  session_id: string;
  [field: string]: unknown;
}

/**
 * Where feedback and client-error reports go. An append that resolves is stored for good; one
 * that rejects (StoreUnavailableError) was not stored, and the sender is told so.
 */
export interface ReportStore {
  append(kind: ReportKind, record: ReportRecord): Promise<void>;
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

  private async write(kind: ReportKind, record: ReportRecord): Promise<void> {
    await mkdir(this.dataDir, { recursive: true });
    const file = join(this.dataDir, kind === 'feedback' ? 'feedback.jsonl' : 'client-errors.jsonl');
    const line = `${JSON.stringify(record)}\n`;
    const size = await stat(file).then((s) => s.size, () => 0);
    if (size > 0 && size + Buffer.byteLength(line) > this.maxBytes) await rename(file, `${file}.1`);
    await appendFile(file, line, 'utf8');
  }
}
