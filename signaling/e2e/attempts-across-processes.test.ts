import { beforeAll, describe, expect, it } from 'vitest';
import { twoProcessesForThisFile } from '../testing/two-processes-per-file.ts';
import type { TestServer } from '../testing/test-server.ts';

/**
 * Guessing is counted per address across the deployment: with Redis, failures spread over two
 * processes add up, so a client cannot double its guesses by reconnecting elsewhere.
 */
const d = twoProcessesForThisFile({ AUTH_FAILURES_PER_ADDRESS: '4', AUTH_FAILURE_WINDOW_S: '60' });
let a: TestServer;
let b: TestServer;
beforeAll(() => {
  ({ a, b } = d);
});

const exchange = (on: TestServer, key: string) =>
  fetch(`${on.url}/api/v1/session-keys`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ session_id: 'sess_guessing_1' }) });

describe.skipIf(!d.enabled)('failed attempts across processes', () => {
  it('five wrong keys (one past AUTH_FAILURES_PER_ADDRESS) split over A and B use up the address on both: the next is 429 with Retry-After, even with the right key', async () => {
    for (const [i, on] of [a, b, a, b, a].entries()) expect((await exchange(on, `pk_wrong_guess_${i}`)).status).toBe(401);
    for (const on of [a, b]) {
      const refused = await exchange(on, a.key);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refused.json()).toMatchObject({ code: 'too_many_attempts', retryable: true });
    }
  });
});
