import type { Browser, Page } from 'puppeteer-core';
import type { TestServer } from '../../signaling/testing/test-server.ts';

/**
 * A page for driving the library from tests. It is any same-origin document (/healthz) with a
 * harness installed before every navigation (so a reload keeps it):
 * - `__wire`: every frame the page sends, on any WebSocket or RTCDataChannel, recorded by
 *   wrapping their send() — this is how tests check a sender's exact wire frame;
 * - `makeClient(options)`: imports /client.js, mints a dev scoped key for the session id,
 *   constructs a RealtimeClient and records all its events in `client.log`;
 * - `waitEvent(client, type, match, timeoutMs, from)`: the first logged event of that type whose
 *   detail has the given field values (`textIncludes` matches inside detail.text).
 * The harness is plain JavaScript in a string: vitest rewrites import() in test sources.
 */
export const LIBRARY_EVENTS = [
  'warming_up', 'recovering', 'failed', 'devices_changed', 'input_device_changed', 'listening', 'reconnecting',
  'reconnected', 'resume_state', 'resume_failed', 'session_end', 'audio', 'close', 'raw',
];

const HARNESS = `(() => {
  const wire = [];
  window.__wire = wire;
  const record = (kind, target, data) => {
    try {
      if (typeof data === 'string') wire.push({ kind, json: JSON.parse(data) });
      else {
        let peak = 0;
        if (data instanceof ArrayBuffer) for (const v of new Int16Array(data, 0, data.byteLength >> 1)) peak = Math.max(peak, Math.abs(v));
        wire.push({ kind, binary: data.byteLength ?? data.size ?? 0, peak });
      }
    } catch { wire.push({ kind, text: String(data) }); }
  };
  // Every WebSocket the page opens, so a test can wait for one to close.
  window.__sockets = [];
  const PageSocket = window.WebSocket;
  window.WebSocket = class extends PageSocket {
    constructor(...args) {
      super(...args);
      window.__sockets.push(this);
    }
  };
  const wsSend = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) { record('ws', this, data); return wsSend.call(this, data); };
  // Frames the capture worklet produced (the audio clock of the page), whether sent or not.
  window.__captured = 0;
  if (window.AudioWorkletNode) {
    const Base = window.AudioWorkletNode;
    window.AudioWorkletNode = class extends Base {
      constructor(...args) {
        super(...args);
        this.port.addEventListener('message', () => { window.__captured += 1; });
        this.port.start();
      }
    };
  }
  if (window.RTCDataChannel) {
    const dcSend = RTCDataChannel.prototype.send;
    RTCDataChannel.prototype.send = function (data) { record('dc:' + this.label, this, data); return dcSend.call(this, data); };
  }
  const LIB_EVENTS = ${JSON.stringify(LIBRARY_EVENTS)};
  const summarize = (type, d) => {
    if (type === 'audio') {
      let peak = 0;
      for (const s of d.samples) peak = Math.max(peak, Math.abs(s));
      return { sr: d.sr, n: d.samples.length, peak, isFloat32: d.samples instanceof Float32Array };
    }
    if (type === 'failed') return { code: d.code, error: { code: d.error && d.error.code, name: d.error && d.error.name, message: d.error && d.error.message } };
    if (type === 'raw') return { direction: d.direction, type: d.frame && d.frame.type, binary: d.frame && d.frame.binary };
    if (type === 'devices_changed') return { ...d, devices: d.devices.map((x) => ({ deviceId: x.deviceId })) };
    return d;
  };
  window.lib = () => import('/client.js');
  window.mintKey = async (sessionId) => {
    const res = await fetch('/dev/session-key', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ session_id: sessionId }) });
    return (await res.json()).api_key;
  };
  window.makeClient = async (options = {}) => {
    const P = await import('/client.js');
    window.P = P;
    const sessionId = options.sessionId || (options.resumeState && options.resumeState.sessionId) || 'c-' + Math.random().toString(36).slice(2, 12);
    const apiKey = options.apiKey || (await window.mintKey(sessionId));
    const client = new P.RealtimeClient({ url: 'ws://' + location.host + '/ws', sessionId, apiKey, ...options });
    const log = [];
    client.log = log;
    for (const type of [...LIB_EVENTS, 'frame']) {
      client.addEventListener(type, (e) => log.push({ type: type === 'frame' ? e.detail.type : type, via: type === 'frame' ? 'frame' : 'lib', detail: summarize(type, e.detail), t: performance.now() }));
    }
    window.client = client;
    return client;
  };
  window.findEvent = (client, type, match = {}, from = 0) => client.log.slice(from).find((e) => e.type === type && Object.entries(match).every(([k, v]) => k === 'textIncludes' ? String(e.detail.text ?? '').includes(v) : JSON.stringify(e.detail[k]) === JSON.stringify(v)));
  window.waitEvent = (client, type, match = {}, timeoutMs = 8000, from = 0) => new Promise((resolve, reject) => {
    const deadline = performance.now() + timeoutMs;
    const tick = () => {
      const found = window.findEvent(client, type, match, from);
      if (found) return resolve(found.detail);
      if (performance.now() > deadline) return reject(new Error('timed out waiting for ' + type + ' ' + JSON.stringify(match) + '; saw ' + client.log.map((e) => e.type).join(',')));
      setTimeout(tick, 10);
    };
    tick();
  });
  /** Milliseconds of assistant audio the client has received (its audio events). */
  window.audioMs = (client) => client.log.filter((e) => e.type === 'audio').reduce((ms, e) => ms + (e.detail.n / e.detail.sr) * 1000, 0);
})();`;

export interface ClientPageOptions {
  userAgent?: string;
}

export async function openClientPage(browser: Browser, server: TestServer, options: ClientPageOptions = {}): Promise<Page> {
  const page = await browser.newPage();
  if (options.userAgent) await page.setUserAgent(options.userAgent);
  await page.evaluateOnNewDocument(HARNESS);
  await page.goto(`${server.url}/healthz`, { waitUntil: 'load' });
  return page;
}

/** Frames the page sent as JSON (optionally of one type), in order. */
export async function wireFrames(page: Page, type?: string): Promise<Array<Record<string, unknown>>> {
  const all = (await page.evaluate(() => (window as unknown as { __wire: Array<{ json?: Record<string, unknown> }> }).__wire)) ?? [];
  return all.flatMap((w) => (w.json && (!type || w.json.type === type) ? [w.json] : []));
}

/** Binary frames the page sent: size in bytes and highest absolute PCM16 sample. */
export async function wireBinary(page: Page): Promise<Array<{ bytes: number; peak: number }>> {
  const all = await page.evaluate(() => (window as unknown as { __wire: Array<{ binary?: number; peak?: number }> }).__wire);
  return all.flatMap((w) => (w.binary !== undefined ? [{ bytes: w.binary, peak: w.peak ?? 0 }] : []));
}

export async function clearWire(page: Page): Promise<void> {
  await page.evaluate(() => {
    (window as unknown as { __wire: unknown[] }).__wire.length = 0;
  });
}

/** Event type names the current page client logged, in order. */
export async function loggedTypes(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { client: { log: Array<{ type: string }> } }).client.log.map((e) => e.type));
}

/** Resolves once the page has sent more than `count` binary frames (with a peak above `peakAbove`, when given). */
export async function waitBinary(page: Page, count: number, peakAbove = -1, timeoutMs = 8000): Promise<void> {
  await page.waitForFunction(
    (n: number, peak: number) => (window as unknown as { __wire: Array<{ binary?: number; peak?: number }> }).__wire.filter((w) => w.binary !== undefined && (w.peak ?? 0) > peak).length > n,
    { timeout: timeoutMs },
    count,
    peakAbove,
  );
}

/**
 * Resolves once the capture worklet produced `frames` more frames: the page's audio clock. A
 * check that nothing was sent meanwhile then covers that much captured audio.
 */
export async function waitCaptured(page: Page, frames: number, timeoutMs = 8000): Promise<void> {
  const from = await page.evaluate(() => (window as unknown as { __captured: number }).__captured);
  await page.waitForFunction((n: number) => (window as unknown as { __captured: number }).__captured >= n, { timeout: timeoutMs }, from + frames);
}

/** Resolves once every WebSocket the page opened is closed (readyState CLOSED). */
export async function waitSocketsClosed(page: Page, timeoutMs = 8000): Promise<void> {
  await page.waitForFunction(() => (window as unknown as { __sockets: WebSocket[] }).__sockets.every((s) => s.readyState === 3), { timeout: timeoutMs });
}

/** Resolves once the client received at least `ms` of assistant audio. */
export async function waitReceivedAudio(page: Page, ms: number, timeoutMs = 8000): Promise<void> {
  await page.waitForFunction((min: number) => (window as W).audioMs((window as W).client) >= min, { timeout: timeoutMs }, ms);
}


/* eslint-disable @typescript-eslint/no-explicit-any -- page-side code reaches window.client */
export type W = any;

/** Creates window.client in the page with these options (merged over `defaults.mode`). */
export function makeClient(p: Page, options: Record<string, unknown> = {}, modality: 'text' | 'voice' = 'text'): Promise<string> {
  return p.evaluate(
    async (o: W, m) => {
      const c = await (window as W).makeClient({ ...o, mode: { kind: 'service', modality: m, ...(o.mode ?? {}) } });
      return c.sessionId as string;
    },
    options,
    modality,
  );
}

export function waitEvent(p: Page, type: string, match: Record<string, unknown> = {}, timeoutMs = 8000): Promise<W> {
  return p.evaluate((t, m, ms) => (window as W).waitEvent((window as W).client, t, m, ms), type, match, timeoutMs);
}

export function events(p: Page, type: string): Promise<W[]> {
  return p.evaluate((t) => (window as W).client.log.filter((e: W) => e.type === t).map((e: W) => e.detail), type);
}

/** Resolves once no reply has been active for `ms`. */
export function waitQuiet(p: Page, ms: number): Promise<void> {
  return p.evaluate(
    (quiet) =>
      new Promise<void>((resolve) => {
        let since = performance.now();
        const tick = () => {
          if ((window as W).client.responding) since = performance.now();
          if (performance.now() - since >= quiet) return resolve();
          setTimeout(tick, 20);
        };
        tick();
      }),
    ms,
  );
}

/** Sends a typed turn and resolves with the reply's utterance text. */
export function say(p: Page, text: string): Promise<string> {
  return p.evaluate(async (t) => {
    const c = (window as W).client;
    const from = c.log.length;
    if (!c.sendText(t)) throw new Error('sendText returned false');
    const asr = await (window as W).waitEvent(c, 'asr', { text: t }, 8000, from);
    await (window as W).waitEvent(c, 'done', { turn_id: asr.turn_id }, 8000, from);
    return (window as W).findEvent(c, 'utterance', { turn_id: asr.turn_id }, from)?.detail.text as string;
  }, text);
}
