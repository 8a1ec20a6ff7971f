import { fileURLToPath } from 'node:url';
import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { chromiumAvailable } from './browser.ts';
import { useDemoPage } from './demo-page.ts';

/**
 * The demo's countdown in headless Chromium against the real server: the credit warning and the
 * credit countdown, called off by a top-up, then the call's time limit counted down to the close.
 */

const SCREENSHOT = fileURLToPath(new URL('../demo/screenshot-closing.png', import.meta.url));

describe.skipIf(!chromiumAvailable())('demo page: closing countdown', { timeout: 40_000 }, () => {
  const demo = useDemoPage({ MAX_SESSION_S: '7', CLOSING_NOTICE_S: '3', LOW_CREDIT_WARNING_S: '30' });

  const banner = (p: Page) => p.$eval('#closing', (el) => ({ text: el.textContent ?? '', hidden: (el as HTMLElement).hidden }));
  const waitBanner = (p: Page, text: string) =>
    p.waitForFunction((t) => { const el = document.querySelector('#closing') as HTMLElement; return !el.hidden && el.textContent?.includes(t) === true; }, { timeout: 10_000 }, text);

  it('shows low credit, counts down to the close it announces, and drops what is called off', async () => {
    // The demo's dev key route mints keys for the account `dev`: 5 units, 5 s at 1 unit a second.
    await demo.server.server.context.stores.accounts.setCredit('dev', 5);
    const p = await demo.openDemo();
    await p.click('#connect');
    await waitBanner(p, 'credit low');
    await waitBanner(p, 'the account runs out of credit (the conversation can be resumed)');
    const first = Number(/closing in (\d+) s/.exec((await banner(p)).text)?.[1]);
    expect(first).toBeGreaterThanOrEqual(2);
    expect(first).toBeLessThanOrEqual(3);
    await demo.server.server.context.stores.accounts.addCredit('dev', 1000);
    await p.waitForFunction(() => (document.querySelector('#closing') as HTMLElement).hidden, { timeout: 5000 });

    // 7 s after the start, announced 3 s ahead: the number goes down, then the call ends.
    await waitBanner(p, 'the call reaches its time limit');
    const start = Number(/closing in (\d+) s/.exec((await banner(p)).text)?.[1]);
    await p.waitForFunction((s) => { const m = /closing in (\d+) s/.exec(document.querySelector('#closing')?.textContent ?? ''); return m !== null && Number(m[1]) < s; }, { timeout: 5000 }, start);
    // Opt-in, as the other demo screenshots: PARLEY_SCREENSHOT=1 npx vitest run client/e2e
    if (process.env.PARLEY_SCREENSHOT === '1') await p.screenshot({ path: SCREENSHOT as `${string}.png` });
    await p.waitForFunction(() => document.querySelector('#status')?.textContent?.includes('disconnected (1000)') === true, { timeout: 10_000 });
    expect((await banner(p)).hidden).toBe(true);
  });
});
