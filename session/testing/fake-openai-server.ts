/**
 * A real HTTP server speaking the OpenAI Chat Completions streaming wire format, so adapters
 * and tool loops are tested through sockets, SSE framing and all, instead of mocked fetch.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { closeServer, ConnectionFaults, cutAfterFlush, flattenHeaders, listenOnLoopback, readBody, routeRequests, sendJson, sleep } from './fake-http.ts';

export interface FakeToolCall {
  id?: string;
  name: string;
  /** Serialized with JSON.stringify; a string is sent verbatim, which lets tests send malformed JSON. */
  args: unknown;
}

export type FakeReply =
  /** Streamed as content deltas: `chunkSize` characters each, or word by word keeping spaces. */
  | { text: string; chunkSize?: number }
  /** Optional text first, then each call with its arguments split over 2+ fragments; finish 'tool_calls'. */
  | { toolCalls: FakeToolCall[]; text?: string }
  /** Non-2xx JSON `{error:{message, type}}`. */
  | { status: number; error: string }
  /** Non-2xx with this body verbatim (a proxy's HTML page, a body quoting URLs and keys). */
  | { status: number; body: string; contentType?: string }
  /** Streams this text, then destroys the socket without finish_reason or [DONE]. */
  | { failAfterText: string }
  /** Streams this text, then keeps the stream open and silent: a stall mid-answer. */
  | { stallAfterText: string }
  /** Never finishes; with `beforeHeaders` it does not even send headers (for timeouts). */
  | { hang: true; beforeHeaders?: boolean }
  /**
   * Writes each piece verbatim as the SSE body, pausing `gapMs` (default 20) between pieces so
   * they arrive as separate TCP reads (split lines, `\r\n`, comments, bad SSE, mid-stream
   * errors, slow bytes), then: `end` (default; no [DONE] unless a piece holds it), `stall` (the
   * stream stays open and silent) or `destroy` (the socket is cut: an early EOF).
   */
  | { raw: string[]; gapMs?: number; then?: 'end' | 'stall' | 'destroy' };

export interface FakeOpenAiServer {
  /** Base URL ending in /v1. */
  url: string;
  /** Parsed JSON bodies of every chat-completions request, in arrival order. */
  requests: unknown[];
  /** Headers of each recorded request (lower-case names), e.g. `headers[0].authorization`. */
  headers: Record<string, string | undefined>[];
  /** Decides replies once the enqueue()d ones are used up; `index` counts all requests from 0. */
  script(fn: (body: any, index: number) => FakeReply): void;
  /** Replies used in order before the script; with neither, the reply is `{ text: 'ok' }`. */
  enqueue(...replies: FakeReply[]): void;
  /** Pause between streamed chunks. Default 0. */
  delayMs: number;
  /** Cuts the next `count` TCP connections as soon as they open (connect-failure faults). */
  dropConnections(count: number): void;
  /** TCP connections opened so far (keep-alive reuse shows as fewer connections than requests). */
  readonly connections: number;
  /**
   * Benchmarks: called once the first non-empty text chunk of a reply has reached the kernel,
   * with `process.hrtime.bigint()` stamps (one clock for every process on the machine) of the
   * request's arrival (its headers parsed), of that socket write, and of the `res.write()` that
   * queued the chunk, so a bench can take the model's own time out of an end-to-end latency.
   */
  onFirstText: ((arrivedNs: bigint, firstTextNs: bigint, body: unknown, queuedNs: bigint) => void) | undefined;
  close(): Promise<void>;
}

const CHAT_PATH = '/v1/chat/completions';
/** Minimum gap for `raw` pieces; enough for the client to read each write separately. */
const RAW_GAP_MS = 20;

export async function startFakeOpenAiServer(): Promise<FakeOpenAiServer> {
  const fake = new FakeServer();
  await fake.listen();
  return fake;
}

class FakeServer implements FakeOpenAiServer {
  url = '';
  requests: unknown[] = [];
  headers: Record<string, string | undefined>[] = [];
  delayMs = 0;
  onFirstText: ((arrivedNs: bigint, firstTextNs: bigint, body: unknown, queuedNs: bigint) => void) | undefined;
  private readonly queue: FakeReply[] = [];
  private scripted: ((body: any, index: number) => FakeReply) | undefined;
  private readonly server: Server = createServer(routeRequests((req, res, path) => this.handle(req, res, path)));
  private readonly faults = new ConnectionFaults(this.server);

  get connections(): number {
    return this.faults.opened;
  }

  dropConnections(count: number): void {
    this.faults.drop(count);
  }

  script(fn: (body: any, index: number) => FakeReply): void {
    this.scripted = fn;
  }

  enqueue(...replies: FakeReply[]): void {
    this.queue.push(...replies);
  }

  async listen(): Promise<void> {
    this.url = `${await listenOnLoopback(this.server)}/v1`;
  }

  close(): Promise<void> {
    // Hanging replies hold their sockets open forever; closeServer cuts them so close() resolves.
    return closeServer(this.server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const arrivedNs = process.hrtime.bigint();
    if (req.method !== 'POST' || path !== CHAT_PATH) {
      sendJson(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: 'not_found' } });
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse((await readBody(req)).toString('utf8'));
    } catch {
      sendJson(res, 400, { error: { message: 'body is not JSON', type: 'invalid_request_error' } });
      return;
    }
    const index = this.requests.length;
    this.requests.push(body);
    this.headers.push(flattenHeaders(req.headers));
    const reply = this.queue.shift() ?? this.scripted?.(body, index) ?? { text: 'ok' };
    const model = typeof (body as { model?: unknown }).model === 'string' ? (body as { model: string }).model : 'fake-model';
    const options = (body as { stream_options?: { include_usage?: unknown } }).stream_options;
    const usage = options?.include_usage === true ? { promptTokens: promptTokensOf(body) } : undefined;
    const hook = this.onFirstText;
    const onFirstText = hook
      ? (): void => {
          const queuedNs = process.hrtime.bigint();
          whenSent(res, () => hook(arrivedNs, process.hrtime.bigint(), body, queuedNs));
        }
      : undefined;
    await this.reply(res, reply, new ChunkWriter(res, `chatcmpl-fake-${index}`, model, this.delayMs, usage, onFirstText));
  }

  private async reply(res: ServerResponse, reply: FakeReply, out: ChunkWriter): Promise<void> {
    if ('body' in reply) {
      res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'text/html' });
      res.end(reply.body);
      return;
    }
    if ('status' in reply) {
      const type = reply.status >= 500 ? 'server_error' : 'invalid_request_error';
      sendJson(res, reply.status, { error: { message: reply.error, type } });
      return;
    }
    if ('hang' in reply) {
      if (!reply.beforeHeaders) {
        startSse(res);
        res.flushHeaders();
      }
      return;
    }
    startSse(res);
    if ('raw' in reply) {
      res.socket?.setNoDelay(true);
      res.flushHeaders();
      for (const [i, piece] of reply.raw.entries()) {
        if (i > 0) await sleep(reply.gapMs ?? Math.max(this.delayMs, RAW_GAP_MS));
        if (res.destroyed) return;
        res.write(piece);
      }
      if (reply.then === 'destroy') await cutAfterFlush(res);
      else if (reply.then !== 'stall') res.end();
      return;
    }
    await out.delta({ role: 'assistant', content: '' });
    if ('failAfterText' in reply) {
      for (const piece of splitText(reply.failAfterText)) await out.delta({ content: piece });
      await cutAfterFlush(res);
      return;
    }
    if ('stallAfterText' in reply) {
      for (const piece of splitText(reply.stallAfterText)) await out.delta({ content: piece });
      return;
    }
    if ('toolCalls' in reply) {
      for (const piece of splitText(reply.text ?? '')) await out.delta({ content: piece });
      for (const [index, call] of reply.toolCalls.entries()) {
        const id = call.id ?? `call_fake_${index}`;
        await out.delta({ tool_calls: [{ index, id, type: 'function', function: { name: call.name, arguments: '' } }] });
        for (const fragment of argumentFragments(call.args)) {
          await out.delta({ tool_calls: [{ index, function: { arguments: fragment } }] });
        }
      }
      await out.finish('tool_calls');
      return;
    }
    for (const piece of splitText(reply.text, reply.chunkSize)) await out.delta({ content: piece });
    await out.finish('stop');
  }
}

/**
 * Writes `chat.completion.chunk` SSE events for one response. With `usage` (the request asked for
 * stream_options.include_usage) every chunk carries `usage: null` and a last chunk with no choices
 * carries the counts, as OpenAI sends them: prompt tokens from the request, one completion token
 * per content or argument piece streamed.
 */
class ChunkWriter {
  private first = true;
  private pieces = 0;
  private readonly created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly res: ServerResponse,
    private readonly id: string,
    private readonly model: string,
    private readonly delayMs: number,
    private readonly usage: { promptTokens: number } | undefined,
    private onFirstText: (() => void) | undefined,
  ) {}

  async delta(delta: Record<string, unknown>): Promise<void> {
    if (delta.content || delta.tool_calls) this.pieces += 1;
    await this.chunk(delta, null);
    if (delta.content && this.onFirstText) {
      this.onFirstText();
      this.onFirstText = undefined;
    }
  }

  async finish(reason: string): Promise<void> {
    await this.chunk({}, reason);
    if (this.usage && !this.res.destroyed) {
      const usage = { prompt_tokens: this.usage.promptTokens, completion_tokens: this.pieces, total_tokens: this.usage.promptTokens + this.pieces };
      this.res.write(`data: ${JSON.stringify({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage })}\n\n`);
    }
    if (!this.res.destroyed) this.res.end('data: [DONE]\n\n');
  }

  private async chunk(delta: Record<string, unknown>, finishReason: string | null): Promise<void> {
    if (!this.first && this.delayMs > 0) await sleep(this.delayMs);
    this.first = false;
    if (this.res.destroyed) return;
    const payload = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
      ...(this.usage ? { usage: null } : {}),
    };
    this.res.write(`data: ${JSON.stringify(payload)}\n\n`);
  }
}

/** The fake's tokenizer: one token per word or punctuation run of every message, plus 3 per message. */
function promptTokensOf(body: unknown): number {
  const messages = (body as { messages?: Array<{ content?: unknown }> }).messages ?? [];
  let tokens = 0;
  for (const message of messages) tokens += 3 + (typeof message.content === 'string' ? (message.content.match(/\w+|[^\w\s]+/g)?.length ?? 0) : 0);
  return tokens;
}

function splitText(text: string, chunkSize?: number): string[] {
  if (chunkSize && chunkSize > 0) {
    const pieces: string[] = [];
    for (let i = 0; i < text.length; i += chunkSize) pieces.push(text.slice(i, i + chunkSize));
    return pieces;
  }
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** Always at least two fragments, like real servers that stream arguments token by token. */
function argumentFragments(args: unknown): string[] {
  const text = typeof args === 'string' ? args : (JSON.stringify(args) ?? '');
  if (text.length < 2) return [text, ''];
  const size = Math.ceil(text.length / Math.min(3, text.length));
  const fragments: string[] = [];
  for (let i = 0; i < text.length; i += size) fragments.push(text.slice(i, i + size));
  return fragments;
}

/**
 * Runs `stamp` as what `res` has queued is handed to the kernel. Node's http corks a response's
 * socket at its first write and uncorks it on process.nextTick, so a reply written in one go
 * (no delayMs) leaves in one write once all of it is composed: a stamp at `res.write()` would
 * count the fake composing the rest of its reply as the client's time.
 */
function whenSent(res: ServerResponse, stamp: () => void): void {
  const socket = res.socket;
  if (!socket || (!socket.writableCorked && socket.writableLength === 0)) return stamp();
  const own = socket as unknown as Record<string, unknown>;
  const proto = Object.getPrototypeOf(socket) as Record<string, (...args: unknown[]) => void>;
  for (const hook of ['_write', '_writev'] as const) {
    own[hook] = function (this: unknown, ...args: unknown[]) {
      delete own._write;
      delete own._writev;
      stamp();
      return proto[hook]!.apply(this, args);
    };
  }
}

function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}
