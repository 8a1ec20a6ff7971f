/**
 * A real HTTP server speaking OpenAI's speech endpoints' wire formats, so the speech adapters
 * are tested through sockets, multipart bodies and chunked PCM instead of mocked fetch:
 *
 * - `POST /v1/audio/transcriptions`: multipart/form-data with a `file` part (must be a RIFF/WAVE)
 *   and a `model` field; answers `{"text": ...}`.
 * - `POST /v1/audio/speech`: JSON `{model, input, voice, response_format: 'pcm'}`; answers raw
 *   24 kHz mono PCM16 LE, written in several chunks with pauses (by default with chunk
 *   boundaries in the middle of a sample), like a synthesiser streaming its output.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { closeServer, ConnectionFaults, cutAfterFlush, flattenHeaders, listenOnLoopback, readBody, routeRequests, sendJson, sleep } from './fake-http.ts';
import { Arrivals } from '../../media/testing/arrivals.ts';

/** The WAV header fields of an uploaded file, read from its fmt and data chunks. */
export interface WavInfo {
  /** The RIFF size field (file length - 8). */
  riffSize: number;
  format: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  blockAlign: number;
  bitsPerSample: number;
  /** Offset of the first sample byte (44 for a canonical header). */
  dataOffset: number;
  /** The data chunk's size field. */
  dataBytes: number;
}

export interface RecordedTranscription {
  model: string;
  /** Every non-file form field, e.g. `fields.language`, `fields.response_format`. */
  fields: Record<string, string>;
  filename: string | undefined;
  fileContentType: string | undefined;
  /** The uploaded file, header and all. */
  wav: Buffer;
  header: WavInfo;
  /** Bytes of PCM in the data chunk. */
  audioBytes: number;
  sampleRate: number;
  /** audioBytes as time, assuming mono PCM16. */
  durationMs: number;
  headers: Record<string, string | undefined>;
  /** The client went away before the answer was sent. */
  aborted: boolean;
}

export interface RecordedSpeech {
  model: string;
  input: string;
  voice: string;
  response_format: unknown;
  body: Record<string, unknown>;
  headers: Record<string, string | undefined>;
  /** PCM bytes written so far. */
  bytesSent: number;
  /** performance.now() when the last byte was written (undefined while streaming or if cut). */
  finishedAt: number | undefined;
  /** The client went away before the stream ended. */
  aborted: boolean;
}

export type TranscriptionReply =
  | string
  /** Answered after `delayMs` (for timeouts and abort-in-flight). */
  | { text: string; delayMs?: number }
  /** Non-2xx JSON `{error:{message, type}}`. */
  | { status: number; error: string }
  /** This status and body verbatim (bad JSON with a 200, a proxy's HTML page...). */
  | { status: number; body: string; contentType?: string }
  /** Never answers; with `afterHeaders` it sends 200 headers and then nothing (a stall). */
  | { hang: true; afterHeaders?: boolean };

export type SpeechReply =
  /**
   * Raw PCM (24 kHz) to stream: written `chunkBytes[0]` bytes first, then `chunkBytes[1]`...,
   * the last size repeating, with `delayMs` between writes (default 10). With `stopAfterBytes`
   * the stream stops there and then: `stall` (default; open and silent) or `destroy` (the socket
   * is cut: an early EOF).
   */
  | { pcm: Int16Array; chunkBytes?: number[]; delayMs?: number; stopAfterBytes?: number; then?: 'stall' | 'destroy' }
  /** Non-2xx JSON `{error:{message, type}}`. */
  | { status: number; error: string }
  /** Never sends headers. */
  | { hang: true };

export interface TranscriptionContext {
  index: number;
  audioBytes: number;
  durationMs: number;
  fields: Record<string, string>;
}

export interface FakeOpenAiSpeechServer {
  /** Base URL ending in /v1. */
  url: string;
  transcriptions: RecordedTranscription[];
  speeches: RecordedSpeech[];
  /** Decides transcription answers; the default answers 'hello'. */
  scriptTranscription(fn: (request: TranscriptionContext) => TranscriptionReply): void;
  /** Decides speech answers; the default is `toneReply(input)`. */
  scriptSpeech(fn: (request: RecordedSpeech, index: number) => SpeechReply): void;
  /** Resolves once `check` holds: re-checked whenever a request is recorded or cut (no polling). */
  until(check: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Cuts the next `count` TCP connections as soon as they open (connect-failure faults). */
  dropConnections(count: number): void;
  close(): Promise<void>;
}

export const FAKE_TTS_SAMPLE_RATE = 24000;
/** Default speech: this much 440 Hz tone per input character. */
export const TONE_MS_PER_CHAR = 60;
/** Default chunking: an odd first chunk, so every later boundary falls mid-sample. */
export const DEFAULT_CHUNK_BYTES = [1001, 4800];
const DEFAULT_CHUNK_DELAY_MS = 10;

/** A 440 Hz tone at 24 kHz, amplitude 8000. */
export function tone(ms: number, frequency = 440, sampleRate = FAKE_TTS_SAMPLE_RATE): Int16Array {
  const out = new Int16Array(Math.round((sampleRate * ms) / 1000));
  for (let i = 0; i < out.length; i += 1) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * frequency * i) / sampleRate));
  return out;
}

/** The default speech answer: TONE_MS_PER_CHAR of tone per character of input. */
export function toneReply(input: string): SpeechReply {
  return { pcm: tone(input.length * TONE_MS_PER_CHAR), chunkBytes: DEFAULT_CHUNK_BYTES, delayMs: DEFAULT_CHUNK_DELAY_MS };
}

export async function startFakeOpenAiSpeechServer(): Promise<FakeOpenAiSpeechServer> {
  const fake = new FakeSpeechServer();
  await fake.listen();
  return fake;
}

const TRANSCRIPTIONS_PATH = '/v1/audio/transcriptions';
const SPEECH_PATH = '/v1/audio/speech';

class FakeSpeechServer implements FakeOpenAiSpeechServer {
  url = '';
  transcriptions: RecordedTranscription[] = [];
  speeches: RecordedSpeech[] = [];
  private readonly changed = new Arrivals();
  private transcribe: (request: TranscriptionContext) => TranscriptionReply = () => 'hello';
  private speak: (request: RecordedSpeech, index: number) => SpeechReply = (request) => toneReply(request.input);
  private readonly server: Server = createServer(routeRequests((req, res, path) => this.handle(req, res, path)));
  private readonly faults = new ConnectionFaults(this.server);

  dropConnections(count: number): void {
    this.faults.drop(count);
  }

  until(check: () => boolean, what: string, timeoutMs = 2000): Promise<void> {
    return this.changed.until(() => (check() ? true : undefined), timeoutMs, () => what).then(() => undefined);
  }

  scriptTranscription(fn: (request: TranscriptionContext) => TranscriptionReply): void {
    this.transcribe = fn;
  }

  scriptSpeech(fn: (request: RecordedSpeech, index: number) => SpeechReply): void {
    this.speak = fn;
  }

  async listen(): Promise<void> {
    this.url = `${await listenOnLoopback(this.server)}/v1`;
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    try {
      if (req.method === 'POST' && path === TRANSCRIPTIONS_PATH) return await this.onTranscription(req, res);
      if (req.method === 'POST' && path === SPEECH_PATH) return await this.onSpeech(req, res);
      sendError(res, 404, `no route ${req.method} ${req.url}`);
    } catch (error) {
      if (!res.headersSent) sendError(res, 500, `fake server failed: ${String(error)}`);
      else res.destroy();
    }
  }

  private async onTranscription(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(req.headers['content-type'] ?? '');
    if (!req.headers['content-type']?.startsWith('multipart/form-data') || !boundary) {
      return sendError(res, 400, 'expected multipart/form-data with a boundary');
    }
    const parts = parseMultipart(await readBody(req), boundary[1] ?? boundary[2]!);
    if (!parts) return sendError(res, 400, 'malformed multipart body');
    const file = parts.find((p) => p.name === 'file');
    if (!file || file.filename === undefined) return sendError(res, 400, "Could not parse multipart form: missing 'file'");
    const header = readWavHeader(file.data);
    if (!header) return sendError(res, 400, 'Invalid file format: the file is not a RIFF/WAVE file');
    const fields: Record<string, string> = {};
    for (const part of parts) if (part.name !== 'file') fields[part.name] = part.data.toString('utf8');
    if (!fields.model) return sendError(res, 400, "you must provide a model parameter");

    const audioBytes = Math.min(header.dataBytes, file.data.length - header.dataOffset);
    const record: RecordedTranscription = {
      model: fields.model,
      fields,
      filename: file.filename,
      fileContentType: file.contentType,
      wav: file.data,
      header,
      audioBytes,
      sampleRate: header.sampleRate,
      durationMs: (audioBytes / 2 / header.sampleRate) * 1000,
      headers: flattenHeaders(req.headers),
      aborted: false,
    };
    const index = this.transcriptions.length;
    this.transcriptions.push(record);
    this.changed.notify();
    res.on('close', () => {
      if (!res.writableFinished) record.aborted = true;
      this.changed.notify();
    });
    const reply = this.transcribe({ index, audioBytes, durationMs: record.durationMs, fields });
    if (typeof reply === 'string') return sendJson(res, 200, { text: reply });
    if ('hang' in reply) {
      if (reply.afterHeaders) res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
      return;
    }
    if ('body' in reply) {
      res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'application/json' });
      return void res.end(reply.body);
    }
    if ('status' in reply) return sendError(res, reply.status, reply.error);
    if (reply.delayMs) await sleep(reply.delayMs);
    if (!res.destroyed) sendJson(res, 200, { text: reply.text });
  }

  private async onSpeech(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse((await readBody(req)).toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      body = parsed as Record<string, unknown>;
    } catch {
      return sendError(res, 400, 'body is not a JSON object');
    }
    const { model, input, voice } = body;
    if (typeof model !== 'string' || !model) return sendError(res, 400, "you must provide a model parameter");
    if (typeof input !== 'string' || !input) return sendError(res, 400, "'input' is required");
    if (typeof voice !== 'string' || !voice) return sendError(res, 400, "'voice' is required");
    if (body.response_format !== 'pcm') return sendError(res, 400, 'this fake only speaks response_format pcm');

    const record: RecordedSpeech = {
      model,
      input,
      voice,
      response_format: body.response_format,
      body,
      headers: flattenHeaders(req.headers),
      bytesSent: 0,
      finishedAt: undefined,
      aborted: false,
    };
    const index = this.speeches.length;
    this.speeches.push(record);
    this.changed.notify();
    const reply = this.speak(record, index);
    if ('hang' in reply) return;
    if ('status' in reply) return sendError(res, reply.status, reply.error);

    res.on('close', () => {
      if (!res.writableFinished) record.aborted = true;
      this.changed.notify();
    });
    res.writeHead(200, { 'content-type': 'audio/pcm', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    const all = pcmBytes(reply.pcm);
    const bytes = reply.stopAfterBytes === undefined ? all : all.subarray(0, reply.stopAfterBytes);
    const sizes = reply.chunkBytes?.length ? reply.chunkBytes : DEFAULT_CHUNK_BYTES;
    const delayMs = reply.delayMs ?? DEFAULT_CHUNK_DELAY_MS;
    let offset = 0;
    for (let n = 0; offset < bytes.length; n += 1) {
      if (n > 0 && delayMs > 0) await sleep(delayMs);
      if (res.destroyed) return;
      const size = Math.max(1, sizes[Math.min(n, sizes.length - 1)]!);
      const piece = bytes.subarray(offset, offset + size);
      res.write(piece);
      offset += piece.length;
      record.bytesSent = offset;
    }
    if (res.destroyed) return;
    if (reply.stopAfterBytes !== undefined) {
      if (reply.then === 'destroy') await cutAfterFlush(res);
      return;
    }
    res.end(() => {
      record.finishedAt = performance.now();
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Wire helpers

interface Part {
  name: string;
  filename: string | undefined;
  contentType: string | undefined;
  data: Buffer;
}

/** RFC 7578 multipart/form-data, binary-safe. Returns undefined when the framing is broken. */
function parseMultipart(body: Buffer, boundary: string): Part[] | undefined {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let start = body.indexOf(delimiter);
  if (start < 0) return undefined;
  for (;;) {
    let cursor = start + delimiter.length;
    if (body.subarray(cursor, cursor + 2).toString('latin1') === '--') return parts; // closing delimiter
    if (body.subarray(cursor, cursor + 2).toString('latin1') !== '\r\n') return undefined;
    cursor += 2;
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), cursor);
    if (next < 0) return undefined;
    const headerEnd = body.indexOf('\r\n\r\n', cursor);
    if (headerEnd < 0 || headerEnd > next) return undefined;
    const headers = body.subarray(cursor, headerEnd).toString('utf8').split('\r\n');
    const disposition = headers.find((h) => /^content-disposition:/i.test(h)) ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) return undefined;
    const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
    const contentType = headers.find((h) => /^content-type:/i.test(h))?.replace(/^content-type:\s*/i, '');
    parts.push({ name, filename, contentType, data: body.subarray(headerEnd + 4, next) });
    start = next + 2;
  }
}

function readWavHeader(file: Buffer): WavInfo | undefined {
  if (file.length < 12 || file.toString('latin1', 0, 4) !== 'RIFF' || file.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  let fmt: Omit<WavInfo, 'riffSize' | 'dataOffset' | 'dataBytes'> | undefined;
  let offset = 12;
  while (offset + 8 <= file.length) {
    const id = file.toString('latin1', offset, offset + 4);
    const size = file.readUInt32LE(offset + 4);
    if (id === 'fmt ' && offset + 24 <= file.length) {
      fmt = {
        format: file.readUInt16LE(offset + 8),
        channels: file.readUInt16LE(offset + 10),
        sampleRate: file.readUInt32LE(offset + 12),
        byteRate: file.readUInt32LE(offset + 16),
        blockAlign: file.readUInt16LE(offset + 20),
        bitsPerSample: file.readUInt16LE(offset + 22),
      };
    } else if (id === 'data') {
      if (!fmt) return undefined;
      return { riffSize: file.readUInt32LE(4), ...fmt, dataOffset: offset + 8, dataBytes: size };
    }
    offset += 8 + size + (size & 1);
  }
  return undefined;
}

function pcmBytes(samples: Int16Array): Buffer {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i += 1) out.writeInt16LE(samples[i]!, i * 2);
  return out;
}

function sendError(res: ServerResponse, status: number, message: string): void {
  const type = status >= 500 ? 'server_error' : status === 429 ? 'rate_limit_error' : 'invalid_request_error';
  sendJson(res, status, { error: { message, type, param: null, code: null } });
}
