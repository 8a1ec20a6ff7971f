import { appendFile, mkdir } from 'node:fs/promises';
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
 * client-errors.jsonl), append-only, easy to ship to any log pipeline.
 */
export class JsonLinesReportStore implements ReportStore {
  constructor(private readonly dataDir: string) {}

  async append(kind: ReportKind, record: ReportRecord): Promise<void> {
    await mkdir(this.dataDir, { recursive: true });
    const file = join(this.dataDir, kind === 'feedback' ? 'feedback.jsonl' : 'client-errors.jsonl');
    await appendFile(file, `${JSON.stringify(record)}\n`, 'utf8');
  }
}
