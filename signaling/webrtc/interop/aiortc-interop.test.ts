import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, WARM_MEDIA_WORKERS, WARM_RECOGNISERS, type TestServer } from '../../testing/test-server.ts';
import { sid } from '../../testing/conversation.ts';

const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./aiortc_peer.py', import.meta.url));
const CLIP = fileURLToPath(new URL('../../../fixtures/audio/twelve.wav', import.meta.url));

const available = (() => {
  try {
    execFileSync(PYTHON, ['-c', 'import aiortc, aiohttp'], { stdio: 'ignore' });
    return true;
  } catch {
    console.warn('!! aiortc interop skipped: install python3-aiortc and python3-aiohttp (bash .ci/debian-deps as root)');
    return false;
  }
})();

let t: TestServer;
let wav: string;
beforeAll(async () => {
  // Silence before the question lets the greeting finish; silence after it ends the turn.
  wav = join(mkdtempSync(join(tmpdir(), 'parley-aiortc-')), 'question.wav');
  execFileSync('sox', [CLIP, wav, 'pad', '1.5', '2.5']);
  t = await startTestServer({ ...WARM_RECOGNISERS, ...WARM_MEDIA_WORKERS, LOCAL_LLM_WORD_DELAY_MS: '10', WEBRTC_LOOPBACK_ONLY: '1' });
});
afterAll(async () => {
  await t.stop();
});

describe.skipIf(!available)('interop with aiortc (an independent WebRTC stack)', () => {
  it('signals, connects, opens the control channel, and carries audio both ways', async () => {
    const { stdout } = await run(PYTHON, [SCRIPT, t.wsUrl, t.key, sid('aiortc'), wav, '8'], { timeout: 30000 });
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as {
      frames: string[]; control_frames: string[]; audio_frames: number; audio_peak: number; connection_state: string; control_state: string; error?: unknown;
    };
    expect(result.error).toBeUndefined();
    expect(result.frames.slice(0, 2)).toEqual(['webrtc_ice', 'webrtc_answer']);
    expect(result.connection_state).toBe('connected');
    expect(result.control_state).toBe('open');
    // The greeting was spoken to aiortc as Opus, and the user's speech was recognised.
    expect(result.audio_frames).toBeGreaterThan(50);
    expect(result.audio_peak).toBeGreaterThan(1000);
    // Frames move to the control channel once it is open.
    expect(result.frames).toContain('ready');
    expect(result.control_frames).toContain('asr');
    expect(result.control_frames.filter((f) => f === 'done').length).toBeGreaterThanOrEqual(2);
  });
});
