import { createHook } from 'node:async_hooks';
import { describe, expect, it, vi } from 'vitest';
import { warmUpCall } from './warm-call.ts';

/** Sockets, timers and lookups created while `run` goes on (async_hooks), with those still alive. */
async function createdBy(run: () => Promise<unknown>): Promise<{ alive(): string[] }> {
  const alive = new Map<number, string>();
  const hook = createHook({
    init: (id, type) => void (HELD.has(type) && alive.set(id, type)),
    destroy: (id) => void alive.delete(id),
  });
  hook.enable();
  try {
    await run();
  } finally {
    hook.disable();
    // Destroys still arrive for what was created meanwhile: only new inits are ignored.
    createHook({ destroy: (id) => void alive.delete(id) }).enable();
  }
  return { alive: () => [...alive.values()] };
}
/** What holds a thread's event loop or a port: sockets, servers, timers, pending lookups. */
const HELD = new Set(['UDPWRAP', 'TCPWRAP', 'TCPSERVERWRAP', 'PIPEWRAP', 'Timeout', 'Immediate', 'GETADDRINFOREQWRAP', 'MESSAGEPORT']);

/**
 * Sockets are closed by the time the call settles (their handles go in the loop's next close
 * phase). werift's DTLS flights each wait out a 500 ms retransmission timer of their own that
 * nothing cancels; they end by themselves, so nothing of the call is alive within a second or so.
 */
async function expectNothingLeft(created: { alive(): string[] }): Promise<void> {
  for (let turn = 0; turn < 2; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  expect(created.alive().filter((type) => type === 'UDPWRAP')).toEqual([]);
  await vi.waitUntil(() => created.alive().length === 0, { timeout: 3000, interval: 50 }).catch(() => undefined);
  expect(created.alive()).toEqual([]);
}

describe('warmUpCall (a media worker calls itself before it says ready)', () => {
  it('connects, carries media and control both ways, closes, and leaves no socket or timer behind', async () => {
    let ms = 0;
    const created = await createdBy(async () => (ms = await warmUpCall(10000)));
    expect(ms).toBeGreaterThan(0);
    await expectNothingLeft(created);
  });

  it('gives up past its bound with where it got to, closing both peers all the same', async () => {
    for (const bound of [1, 30, 60]) {
      const created = await createdBy(() =>
        expect(warmUpCall(bound)).rejects.toThrow(new RegExp(`^the warm-up call did not finish within ${bound} ms \\((offer|answer|connecting|media)\\)$`)),
      );
      await expectNothingLeft(created);
    }
  });
});
