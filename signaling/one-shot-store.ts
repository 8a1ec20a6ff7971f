import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Feedback and client error reports, one JSON object per line under DATA_DIR
 * (feedback.jsonl, client-errors.jsonl): append-only, easy to ship to any log pipeline.
 */
export class OneShotStore {
  constructor(private readonly dataDir: string) {}

  async append(kind: 'feedback' | 'client_error', record: Record<string, unknown>): Promise<void> {
    await mkdir(this.dataDir, { recursive: true });
    const file = join(this.dataDir, kind === 'feedback' ? 'feedback.jsonl' : 'client-errors.jsonl');
    await appendFile(file, `${JSON.stringify(record)}\n`, 'utf8');
  }
}
