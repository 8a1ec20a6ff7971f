import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { WebSocketTransport } from './ws-transport.ts';

/**
 * The transport batches a tick's frames into one socket write by corking the socket the HTTP
 * server handed to the upgrade. That only works while ws writes its frames into that very
 * socket (handleUpgrade's contract): if a ws release stops doing so, these tests fail.
 */

const limits = { AUDIO_BACKLOG_BYTES: 1_000_000, SEND_BACKLOG_LIMIT_BYTES: 10_000_000, SLOW_CONSUMER_MS: 60_000 };
const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))));

/** A server whose one connection gets a WebSocketTransport; counts the socket's flushes to the kernel. */
async function connect(): Promise<{ transport: WebSocketTransport; flushes: () => number; client: WebSocket; received: string[] }> {
  const http = createServer();
  servers.push(http);
  const wss = new WebSocketServer({ noServer: true });
  const accepted = new Promise<{ transport: WebSocketTransport; flushes: () => number }>((resolve) => {
    http.on('upgrade', (req, socket: Socket, head) => {
      // Writable's implementer hooks: one call per batch of bytes handed to the kernel.
      let flushes = 0;
      for (const hook of ['_write', '_writev'] as const) {
        const original = socket[hook] as (...args: unknown[]) => void;
        (socket as unknown as Record<string, unknown>)[hook] = function (this: Socket, ...args: unknown[]) {
          flushes += 1;
          return original.apply(this, args);
        };
      }
      wss.handleUpgrade(req, socket, head, (ws) => resolve({ transport: new WebSocketTransport(ws, socket, limits, () => undefined, { errorSent: () => undefined }), flushes: () => flushes }));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(http.address() as AddressInfo).port}/`);
  const received: string[] = [];
  client.on('message', (data) => received.push(String(data)));
  await new Promise((resolve) => client.once('open', resolve));
  return { ...(await accepted), client, received };
}

describe('WebSocketTransport', () => {
  it("hands a tick's frames to the kernel in one write (ws writes into the upgrade socket)", async () => {
    const { transport, flushes, client, received } = await connect();
    const before = flushes();
    for (let i = 0; i < 5; i += 1) transport.sendFrame({ type: 'voice', voice: `v${i}`, name: `V${i}` });
    await new Promise((resolve) => client.on('message', () => received.length === 5 && resolve(undefined)));
    expect(received.map((r) => (JSON.parse(r) as { voice: string }).voice)).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
    expect(flushes() - before).toBe(1);
    client.close();
  });

  it('frames of different ticks are written separately (the cork is released every tick)', async () => {
    const { transport, flushes, client, received } = await connect();
    const before = flushes();
    transport.sendFrame({ type: 'voice', voice: 'a', name: 'A' });
    await new Promise((resolve) => setImmediate(resolve));
    transport.sendFrame({ type: 'voice', voice: 'b', name: 'B' });
    await new Promise((resolve) => client.on('message', () => received.length === 2 && resolve(undefined)));
    expect(flushes() - before).toBe(2);
    client.close();
  });

  it("a reply's first text_delta leaves at once; the tick's later frames still leave together", async () => {
    const { transport, flushes, client, received } = await connect();
    const before = flushes();
    const turn = (id: string, words: string[]): void => {
      transport.sendFrame({ type: 'turn', turn_id: id });
      for (const delta of words) transport.sendFrame({ type: 'text_delta', turn_id: id, delta });
    };
    // A whole answer in one tick (it came in one read): turn + first delta, then the rest.
    turn('t1', ['Hi ', 'there ', 'you.']);
    expect(flushes() - before).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(flushes() - before).toBe(2);
    // Later deltas of the same reply batch as before; the next reply's first delta is flushed again.
    for (const delta of ['More ', 'words.']) transport.sendFrame({ type: 'text_delta', turn_id: 't1', delta });
    await new Promise((resolve) => setImmediate(resolve));
    expect(flushes() - before).toBe(3);
    turn('t2', ['Next.']);
    expect(flushes() - before).toBe(4);
    await new Promise((resolve) => client.on('message', () => received.length === 8 && resolve(undefined)));
    const shown = received.map((r) => JSON.parse(r) as { type: string; delta?: string });
    expect(shown.map((f) => f.delta ?? f.type)).toEqual(['turn', 'Hi ', 'there ', 'you.', 'More ', 'words.', 'turn', 'Next.']);
    client.close();
  });
});
