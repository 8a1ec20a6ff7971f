import { libraryError, RealtimeError } from './errors.ts';
import { openWebSocket, webSocketClass, WS_CONNECTING, WS_OPEN, type WebSocketConstructor } from './websocket-impl.ts';

export interface FeedbackOptions {
  /** {ws_url}/ws */
  url: string;
  sessionId: string;
  /** The user's rating; the server stores it as given (e.g. 1 to 5). */
  rating: number;
  text?: string;
  device?: string;
  browser?: string;
  apiKey?: string;
  /** How long to wait for feedback_ack (default 10000 ms). */
  timeoutMs?: number;
  /** The WebSocket class where there is no global one (Node 20: the ws package's). */
  WebSocket?: WebSocketConstructor;
}

export interface ClientErrorOptions {
  url: string;
  sessionId: string;
  /** What went wrong, human-readable. */
  detail: string;
  /** Any JSON the application wants stored with it (state, stack, versions). */
  context?: unknown;
  apiKey?: string;
  timeoutMs?: number;
  WebSocket?: WebSocketConstructor;
}

/**
 * One-shot reports on their own WebSocket, usable after the conversation socket has closed.
 * Wire (library-defined, SPEC leaves it open): the first and only client frame is
 *   {type:'feedback', session_id, rating, text?, device?, browser?, api_key?}   or
 *   {type:'client_error', session_id, detail, context?, api_key?}
 * and the server answers {type:'feedback_ack' | 'client_error_ack', id} (or an error frame),
 * then the client closes with 1000.
 */
export function sendFeedback(options: FeedbackOptions): Promise<{ id: string }> {
  const frame: Record<string, unknown> = { type: 'feedback', session_id: options.sessionId, rating: options.rating };
  if (options.text !== undefined) frame.text = options.text;
  if (options.device !== undefined) frame.device = options.device;
  if (options.browser !== undefined) frame.browser = options.browser;
  if (options.apiKey) frame.api_key = options.apiKey;
  return oneShot(options, frame, 'feedback_ack');
}

export function sendClientError(options: ClientErrorOptions): Promise<{ id: string }> {
  const frame: Record<string, unknown> = { type: 'client_error', session_id: options.sessionId, detail: options.detail };
  if (options.context !== undefined) frame.context = options.context;
  if (options.apiKey) frame.api_key = options.apiKey;
  return oneShot(options, frame, 'client_error_ack');
}

function oneShot(options: { url: string; timeoutMs?: number; WebSocket?: WebSocketConstructor }, frame: Record<string, unknown>, ackType: string): Promise<{ id: string }> {
  const { url, timeoutMs = 10000 } = options;
  return new Promise((resolve, reject) => {
    let ws: WebSocket;
    try {
      ws = openWebSocket(url, webSocketClass(options.WebSocket));
    } catch (error) {
      // A TypeError: no WebSocket class at all, a mistake of the caller's setup, not of the network.
      reject(error instanceof TypeError ? error : libraryError('connection_closed', `cannot open ${url}: ${String(error)}`, true));
      return;
    }
    let settled = false;
    const finish = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (ws.readyState === WS_OPEN || ws.readyState === WS_CONNECTING) ws.close(1000, 'done');
      outcome();
    };
    const timer = setTimeout(() => finish(() => reject(libraryError('ack_timeout', `no ${ackType} within ${timeoutMs} ms`, true))), timeoutMs);
    ws.onopen = () => ws.send(JSON.stringify(frame));
    ws.onmessage = (event: MessageEvent) => {
      if (typeof event.data !== 'string') return;
      let reply: { type?: unknown; id?: unknown; code?: unknown; detail?: unknown; retryable?: unknown };
      try {
        reply = JSON.parse(event.data) as typeof reply;
      } catch {
        return;
      }
      if (reply.type === ackType) finish(() => resolve({ id: String(reply.id ?? '') }));
      else if (reply.type === 'error') finish(() => reject(new RealtimeError(String(reply.code), String(reply.detail ?? ''), reply.retryable === true)));
    };
    ws.onclose = (event: CloseEvent) => finish(() => reject(libraryError('connection_closed', `closed before ${ackType} (${event.code})`, true)));
  });
}
