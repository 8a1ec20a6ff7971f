import { appendFile, mkdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Feedback and client error reports, one JSON object per line under DATA_DIR (feedback.jsonl,
 * client-errors.jsonl): append-only, easy to ship to any log pipeline. Each file is bounded:
 * once a report would take it past `maxBytes` it is rotated to `<name>.1` (replacing the
 * previous one), so the reports of one kind never hold more than twice `maxBytes` on disk.
 */
export class OneShotStore {
  /** Appends run one at a time, so a rotation never races another append. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly dataDir: string,
    private readonly maxBytes: number,
  ) {}

  append(kind: 'feedback' | 'client_error', record: Record<string, unknown>): Promise<void> {
    const write = this.queue.then(() => this.write(kind, record));
    this.queue = write.catch(() => undefined);
    return write;
  }

  private async write(kind: 'feedback' | 'client_error', record: Record<string, unknown>): Promise<void> {
    await mkdir(this.dataDir, { recursive: true });
    const file = join(this.dataDir, kind === 'feedback' ? 'feedback.jsonl' : 'client-errors.jsonl');
    const line = `${JSON.stringify(record)}\n`;
    const size = await stat(file).then((s) => s.size, () => 0);
    if (size > 0 && size + Buffer.byteLength(line) > this.maxBytes) await rename(file, `${file}.1`);
    await appendFile(file, line, 'utf8');
  }
}
