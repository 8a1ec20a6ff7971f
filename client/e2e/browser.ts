import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';

/**
 * Headless Chromium for the browser tests. We drive Debian's `chromium` package through
 * puppeteer-core because puppeteer's own browser download is unreachable from CI; the package
 * is installed by `.ci/debian-deps` (also the `pretest` script).
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

const BASE_ARGS = [
  '--no-sandbox', // CI runs as root, where Chromium's sandbox refuses to start
  '--disable-gpu',
  '--disable-quic',
  // No network chatter of its own: the machine is offline apart from the test server.
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const MEDIA_ARGS = [
  // Grant getUserMedia without a prompt and feed it a synthetic beep instead of a real mic.
  '--use-fake-ui-for-media-stream',
  '--use-fake-device-for-media-stream',
  '--autoplay-policy=no-user-gesture-required',
];

let warned = false;

/** Whether Chromium is installed; warns loudly (once per test file) when it is not. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  if (!warned) {
    warned = true;
    console.warn(
      [
        '',
        '!'.repeat(78),
        `!! Browser e2e tests SKIPPED: no Chromium at ${CHROMIUM_PATH}.`,
        '!! Fix: run `bash .ci/debian-deps` as root (installs the Debian `chromium` package),',
        '!!      or point CHROMIUM_PATH at a Chromium/Chrome binary.',
        '!'.repeat(78),
        '',
      ].join('\n'),
    );
  }
  return false;
}

const profiles = new WeakMap<Browser, string>();

/** Launches headless Chromium with a fresh profile; pair with closeChromium() in afterAll. */
export async function launchChromium(options: { media?: boolean; args?: string[] } = {}): Promise<Browser> {
  // A throwaway profile per browser: no state leaks between runs or parallel test files.
  const userDataDir = mkdtempSync(join(tmpdir(), 'parley-chromium-'));
  try {
    const browser = await puppeteer.launch({
      executablePath: CHROMIUM_PATH,
      headless: true, // puppeteer turns this into --headless=new
      userDataDir,
      args: [...BASE_ARGS, ...(options.media ? MEDIA_ARGS : []), ...(options.args ?? [])],
    });
    profiles.set(browser, userDataDir);
    return browser;
  } catch (error) {
    rmSync(userDataDir, { recursive: true, force: true });
    throw error;
  }
}

/** Closes the browser (if any) and removes its profile directory. */
export async function closeChromium(browser: Browser | undefined): Promise<void> {
  if (!browser) return;
  const userDataDir = profiles.get(browser);
  try {
    await browser.close();
  } finally {
    // Chromium may still be flushing the profile for a moment after exit: retry the removal.
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }
}
