import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleClient } from '../../signaling/http/static-routes.ts';
// @ts-expect-error -- a plain .mjs build script without type declarations
import { buildClient } from '../build.mjs';

const dir = mkdtempSync(join(tmpdir(), 'parley-client-build-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the client bundle', () => {
  it('builds to one browser ES module with no zod and no Node built-ins, exporting the public API', async () => {
    const outfile = join(dir, 'client.js');
    const { inputs } = (await buildClient({ outfile })) as { inputs: string[] };
    // Only the library itself and the protocol's zod-free limits end up in the bundle.
    expect(inputs.filter((i) => !i.startsWith('client/src/'))).toEqual(['session/protocol/limits.ts']);
    const code = readFileSync(outfile, 'utf8');
    expect(code).not.toMatch(/zod|ZodError/);
    expect(code).not.toMatch(/from\s*["']node:|require\(/);
    const mod = (await import(pathToFileURL(outfile).href)) as Record<string, unknown>;
    expect(Object.keys(mod).sort()).toEqual([
      'CAPTURE_PROCESSOR',
      'DEFAULT_RECONNECT_POLICY',
      'FRAME_EVENT',
      'LIBRARY_ERROR_CODES',
      'RealtimeClient',
      'RealtimeError',
      'nextReconnectDelay',
      'sendClientError',
      'sendFeedback',
    ]);
    expect(mod.FRAME_EVENT).toBe('frame');
  });

  it('is what the server serves at /client.js, also free of zod', async () => {
    const served = await bundleClient();
    expect(served).not.toMatch(/ZodError|from\s*["']zod/);
    expect(served).toMatch(/RealtimeEventTarget = class extends EventTarget/);
    expect(served).toMatch(/RealtimeClient = class extends RealtimeEventTarget/);
  });
});
