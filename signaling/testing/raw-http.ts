import { connect } from 'node:net';

/**
 * Sends bytes exactly as given on a fresh TCP connection and resolves with everything the server
 * answered until it closed (or `timeoutMs`): for requests no HTTP client library would send.
 */
export function rawExchange(port: number, request: string | Buffer, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    const finish = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('connect', () => socket.write(request));
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('close', finish);
    socket.on('error', finish);
  });
}

/** A well-formed WebSocket upgrade request for `target`, with extra header lines. */
export function upgradeRequest(target: string, headers: Record<string, string> = {}): string {
  const lines = [
    `GET ${target} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Upgrade: websocket',
    'Connection: Upgrade',
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
    'Sec-WebSocket-Version: 13',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n`;
}
