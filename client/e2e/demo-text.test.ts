import { fileURLToPath } from 'node:url';
import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { ServerFrame } from '../../session/protocol/server.ts';
import { FRAME_EVENT } from '../src/index.ts';
import { chromiumAvailable } from './browser.ts';
import { sendText, useDemoPage } from './demo-page.ts';

/**
 * The demo page (client/demo/index.html) and the bundled /client.js, driven end to end in
 * headless Chromium against a real server with the offline language model.
 */

const SCREENSHOT = fileURLToPath(new URL('../demo/screenshot.png', import.meta.url));
/** Every server frame type, from the wire schema, so the page can listen under each name. */
const FRAME_TYPES: string[] = ServerFrame.options.map((o) => o.shape.type.value);

describe.skipIf(!chromiumAvailable())('demo page in Chromium (text)', { timeout: 30_000 }, () => {
  // A small per-word delay so replies stream in visibly, as they would from a real model.
  const demo = useDemoPage({ LOCAL_LLM_WORD_DELAY_MS: '30' });
  const { openDemo } = demo;

  /** The initial text is "not connected", so require the status to start with "connected". */
  const waitConnected = (p: Page) =>
    p.waitForFunction(() => document.querySelector('#status')?.textContent?.startsWith('connected') === true);
  const waitAssistantSays = (p: Page, text: string) =>
    p.waitForFunction(
      (t) => [...document.querySelectorAll('.msg.assistant')].some((el) => el.textContent?.includes(t)),
      {},
      text,
    );
  const assistantTexts = (p: Page) =>
    p.$$eval('.msg.assistant', (els) => els.map((el) => el.textContent ?? ''));

  it('connects with a dev key, greets, and answers a typed question as it streams', async () => {
    const p = await openDemo();
    await p.click('#connect'); // key field empty: the page mints a key at /dev/session-key
    await waitConnected(p);
    await waitAssistantSays(p, 'Hello');

    // Record every text the newest assistant bubble shows, to prove the reply renders incrementally.
    await p.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      new MutationObserver(() => {
        const last = [...document.querySelectorAll('.msg.assistant')].at(-1);
        if (last?.textContent) seen.push(last.textContent);
      }).observe(document.querySelector('#log')!, { childList: true, subtree: true, characterData: true });
    });
    await sendText(p, 'what is 6 times 7');
    await waitAssistantSays(p, '42');
    const seen = await p.evaluate(() => (window as unknown as { seen: string[] }).seen);
    expect(new Set(seen).size).toBeGreaterThan(2);
    expect(await p.$eval('#text', (el) => (el as HTMLInputElement).value)).toBe('');

    await sendText(p, 'my name is Ada');
    await waitAssistantSays(p, 'I will remember that.');
    // One bubble per reply, in order (exact wording is the offline model's business).
    const replies = await assistantTexts(p);
    expect(replies).toHaveLength(3);
    expect(replies[0]).toContain('Hello');
    expect(replies[1]).toContain('42');
    expect(replies[2]).toContain('Ada');

    // Opt-in so normal runs don't rewrite a tracked file: PARLEY_SCREENSHOT=1 npx vitest run client/e2e
    if (process.env.PARLEY_SCREENSHOT === '1') {
      await p.screenshot({ path: SCREENSHOT as `${string}.png`, fullPage: true });
    }
  });

  it('connects with a pasted persistent key and refuses a bogus one', async () => {
    let p = await openDemo();
    await p.type('#key', demo.server.key);
    await p.click('#connect');
    await waitConnected(p);
    await waitAssistantSays(p, 'Hello');
    await p.close();

    p = await openDemo();
    await p.type('#key', 'sk_bogus_0000000000000000');
    await p.click('#connect');
    // The server answers with an error frame, then closes the socket. Wait for both to land so we
    // check the status the user is left with, not a transient one.
    await p.waitForFunction(() => document.querySelector('.msg.system')?.textContent?.includes('unauthorized') === true);
    await p.waitForFunction(() => document.querySelector('#status')?.textContent?.includes('could not connect') === true);
    const status = await p.$eval('#status', (el) => ({ text: el.textContent ?? '', cls: el.className }));
    expect(status.text).toContain('could not connect');
    expect(status.text).toContain('unauthorized');
    expect(status.cls).toBe('bad');
    expect(await p.$eval('#connect', (el) => (el as HTMLButtonElement).disabled)).toBe(false);
    expect(await p.$eval('#text', (el) => (el as HTMLInputElement).disabled)).toBe(true);
  });

  it('dispatches every frame under its type and under the catch-all event', async () => {
    const p = await openDemo();
    await p.click('#connect');
    await waitConnected(p);

    // A string, not a function: vitest rewrites import() in test sources, which would break in
    // the page. The page has its own client from /client.js; this one is a second, separate one.
    const script = `(async () => {
      const mod = await import('/client.js');
      if (typeof mod.RealtimeClient !== 'function') return { exported: Object.keys(mod) };
      const res = await fetch('/dev/session-key', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ session_id: 'x1' }),
      });
      const { api_key } = await res.json();
      const client = new mod.RealtimeClient({
        url: 'ws://' + location.host + '/ws',
        sessionId: 'x1',
        apiKey: api_key,
        mode: { kind: 'service', modality: 'text' },
      });
      const typed = [];
      const frames = [];
      for (const type of ${JSON.stringify(FRAME_TYPES)}) client.addEventListener(type, () => typed.push(type));
      client.addEventListener(${JSON.stringify(FRAME_EVENT)}, (e) => frames.push(e.detail.type));
      const replied = new Promise((resolve) => client.addEventListener('done', (e) => resolve(e.detail), { once: true }));
      // No greeting: every frame after ready belongs to the one input_text round trip.
      await client.connect({ noGreeting: true });
      client.sendText('what is 6 times 7');
      const done = await replied;
      // Anything the server sent before the close handshake arrives before it completes.
      await client.closeAndWait();
      return { exported: Object.keys(mod), typed, frames, done };
    })()`;
    const result = (await p.evaluate(script)) as {
      exported: string[];
      typed?: string[];
      frames?: string[];
      done?: { status: string };
    };

    expect(result.exported).toContain('RealtimeClient');
    expect(result.done?.status).toBe('completed');
    expect(result.frames?.length).toBeGreaterThan(4);
    expect(result.typed).toEqual(result.frames);
    expect(result.frames?.[0]).toBe('ready');
    expect(result.frames).toContain('text_delta');
  });
});
