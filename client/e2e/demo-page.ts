import type { Browser, Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { ServerOverrides } from '../../signaling/server.ts';
import { startTestServer, type TestServer } from '../../signaling/testing/test-server.ts';
import { closeChromium, launchChromium } from './browser.ts';

/**
 * The demo page (client/demo/index.html) under test, for the demo-*.test.ts files. Call inside a
 * describe block: it starts a real server with `env` and Chromium for the block, and closes the
 * test's page after each test, failing the test on any uncaught exception in the page.
 */
export function useDemoPage(
  env: Record<string, string>,
  browserOptions: { media?: boolean; args?: string[] } = {},
  overrides: ServerOverrides = {},
): { readonly server: TestServer; openDemo(): Promise<Page> } {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[] = [];

  beforeAll(async () => {
    server = await startTestServer(env, overrides);
    browser = await launchChromium(browserOptions);
  });

  afterAll(async () => {
    await closeChromium(browser);
    await server?.stop();
  });

  afterEach(async () => {
    // Uncaught exceptions in the page fail the test even when the visible flow looked fine.
    expect(pageErrors).toEqual([]);
    await page?.close();
  });

  return {
    get server() {
      return server;
    },
    /** A new page at the demo, the test's page from now on (only errors from here on count). */
    async openDemo(): Promise<Page> {
      page = await browser.newPage();
      await page.setViewport({ width: 900, height: 760 });
      pageErrors = [];
      page.on('pageerror', (error) => pageErrors.push(String(error)));
      await page.goto(`${server.url}/`, { waitUntil: 'load' });
      return page;
    },
  };
}

/** Types into the demo's composer and submits it with Enter. */
export async function sendText(p: Page, text: string): Promise<void> {
  await p.type('#text', text);
  await p.keyboard.press('Enter'); // submits the composer form
}
