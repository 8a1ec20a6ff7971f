import WebSocket from 'ws';
import { Inbox } from './inbox.ts';

/** What a canary session suffered while others were fuzzed: it should be nothing. */
export interface CanaryReport {
  turns: number;
  harm: string[];
}

/**
 * A well-behaved session beside the fuzzed ones: it asks the same question turn after turn
 * (input_text in text, inject_context in voice) and expects each reply complete, correct and
 * within `turnMs`, with no error frame and no close. Anything else is harm done to it.
 */
export class Canary {
  readonly report: CanaryReport = { turns: 0, harm: [] };
  private ws: WebSocket | undefined;
  private readonly inbox = new Inbox(() => this.ws?.readyState === WebSocket.OPEN);
  private audioBytes = 0;
  private stopped = false;

  constructor(
    private readonly wsUrl: string,
    private readonly key: string,
    private readonly modality: 'text' | 'voice',
    private readonly sessionId: string,
    private readonly turnMs: number,
  ) {}

  async open(): Promise<void> {
    const ws = new WebSocket(this.wsUrl, { perMessageDeflate: false });
    this.ws = ws;
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        this.audioBytes += (data as Buffer).length;
        return this.inbox.notify();
      }
      const frame = JSON.parse(String(data)) as { type: string; code?: unknown; detail?: unknown };
      if (frame.type === 'error') this.report.harm.push(`error ${String(frame.code)}: ${String(frame.detail)}`);
      this.inbox.push(frame);
    });
    ws.on('close', (code) => {
      if (!this.stopped) this.report.harm.push(`socket closed (${code})`);
      this.inbox.notify();
    });
    ws.on('error', () => undefined);
    await new Promise<void>((ok, fail) => {
      ws.once('open', () => ok());
      ws.once('error', fail);
    });
    ws.send(JSON.stringify({ type: 'start', session_id: this.sessionId, api_key: this.key, mode: { kind: 'service', modality: this.modality, greeting: false }, ...(this.modality === 'voice' ? { audio: { sr: 16000 } } : {}) }));
    if (!(await this.inbox.waitFor((f) => f.type === 'ready', 0, this.turnMs))) this.report.harm.push('no ready');
  }

  /** Turns until `stop()`. */
  async run(): Promise<void> {
    while (!this.stopped && this.ws?.readyState === WebSocket.OPEN) await this.turn();
  }

  async stop(): Promise<CanaryReport> {
    this.stopped = true;
    this.ws?.close(1000);
    return this.report;
  }

  private async turn(): Promise<void> {
    const after = this.inbox.frames.length;
    const audioBefore = this.audioBytes;
    const text = 'what is 12 times 7';
    this.ws!.send(JSON.stringify(this.modality === 'text' ? { type: 'input_text', text } : { type: 'inject_context', message_id: `c${this.report.turns}`, text, role: 'user' }));
    const done = await this.inbox.waitFor((f) => f.type === 'done', after, this.turnMs);
    if (this.stopped) return;
    if (!done) return void this.report.harm.push(`turn ${this.report.turns}: no done within ${this.turnMs} ms`);
    const utterance = this.inbox.frames.slice(after).find((f) => f.type === 'utterance');
    if (done.status !== 'completed') this.report.harm.push(`turn ${this.report.turns}: done ${String(done.status)}`);
    else if (!String(utterance?.text ?? '').includes('84')) this.report.harm.push(`turn ${this.report.turns}: wrong answer ${String(utterance?.text)}`);
    else if (this.modality === 'voice' && this.audioBytes === audioBefore) this.report.harm.push(`turn ${this.report.turns}: no audio`);
    this.report.turns += 1;
  }
}
