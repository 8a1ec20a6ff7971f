/**
 * A WebSocket class with the browser's API: the global one in browsers (and Node 22+), the `ws`
 * package's in Node 20 (`import WebSocket from 'ws'`). Typed by the little the library needs, so
 * either satisfies it.
 */
export type WebSocketConstructor = new (url: string) => {
  send(data: string): void;
  close(code?: number, reason?: string): void;
};

/** The readyState values every implementation shares (the global may be absent in Node). */
export const WS_CONNECTING = 0;
export const WS_OPEN = 1;
export const WS_CLOSING = 2;
export const WS_CLOSED = 3;

/** The class given, else the global one; a TypeError when there is neither (Node 20 without `ws`). */
export function webSocketClass(given: WebSocketConstructor | undefined): WebSocketConstructor {
  const found = given ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!found) throw new TypeError("RealtimeClient: no global WebSocket here; in Node 20 pass the ws package's class: { WebSocket } (import WebSocket from 'ws')");
  return found;
}

/** A socket with the browser's type: the library uses only what every implementation has. */
export function openWebSocket(url: string, impl: WebSocketConstructor): WebSocket {
  return new impl(url) as unknown as WebSocket;
}
