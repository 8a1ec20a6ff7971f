import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { chromiumAvailable } from './browser.ts';
import type { W } from './client-page.ts';
import { sendText, useDemoPage } from './demo-page.ts';

/**
 * The demo page's features beyond text chat: the sample client tool, the sessionStorage reload
 * pattern, reconnect status, and voice with the talk button and interruption, in headless
 * Chromium with a fake microphone against the real server.
 */

describe.skipIf(!chromiumAvailable())('demo page in Chromium (tools, reload, reconnect, voice)', { timeout: 40_000 }, () => {
  const { openDemo } = useDemoPage({ LOCAL_LLM_WORD_DELAY_MS: '20' }, { media: true });

  const status = (p: Page) => p.$eval('#status', (el) => el.textContent ?? '');
  const waitStatus = (p: Page, text: string) =>
    p.waitForFunction((t) => document.querySelector('#status')?.textContent?.includes(t) === true, { timeout: 10000 }, text);
  const waitMsg = (p: Page, selector: string, text: string) =>
    p.waitForFunction(
      (s, t) => [...document.querySelectorAll(s)].some((el) => el.textContent?.includes(t)),
      { timeout: 10000 },
      selector,
      text,
    );

  it('runs the sample get_time tool and answers with its result', async () => {
    const p = await openDemo();
    await p.click('#connect');
    await waitStatus(p, 'connected');
    await sendText(p, 'please get time');
    await waitMsg(p, '.msg.tool', 'get_time()');
    await waitMsg(p, '.msg.assistant', 'Done: get_time succeeded');
    const mode = await p.evaluate(() => (window as W).parleyClient.mode);
    expect(mode.tools.map((t: W) => t.name)).toEqual(['get_time']);
  });

  it('draws each turn\'s latency waterfall from done.metrics', async () => {
    const p = await openDemo();
    await p.click('#connect');
    await waitStatus(p, 'connected');
    const metrics = p.evaluate(
      // The typed turn's done (the greeting's has no typed stages).
      () => new Promise((resolve) => (window as W).parleyClient.addEventListener('done', (e: W) => e.detail.metrics?.text_first_delta !== undefined && resolve(e.detail.metrics))),
    );
    await sendText(p, 'what is 6 times 7');
    const stages = Object.keys((await metrics) as object).sort();
    expect(stages).toEqual(['llm_first_token', 'text_first_delta']);
    await p.waitForFunction(() => document.querySelectorAll('.waterfall .bar').length >= 2);
    const rows = await p.$$eval('.waterfall', (charts) => [...charts.at(-1)!.children].filter((el) => !el.classList.contains('track')).map((el) => el.textContent));
    expect(rows.map((r) => r!.split(' ')[0]).sort()).toEqual(stages);
    for (const row of rows) expect(row).toMatch(/ \d+ ms$/);
  });

  it('reload resumes the conversation from sessionStorage; a drop shows reconnect status', async () => {
    const p = await openDemo();
    await p.click('#connect');
    await waitStatus(p, 'connected');
    await sendText(p, 'my name is Ada');
    await waitMsg(p, '.msg.assistant', 'I will remember that.');
    const stored = await p.evaluate(() => JSON.parse(sessionStorage.getItem('parley.demo') ?? 'null'));
    expect(stored.state).toMatchObject({ version: 1, resumeToken: expect.stringMatching(/^rt_/) });

    await p.reload({ waitUntil: 'load' });
    await waitStatus(p, 'connected · resumed');
    // the transcript came back with the page
    expect(await p.$$eval('.msg.user', (els) => els.map((e) => e.textContent))).toEqual(['my name is Ada']);
    await sendText(p, 'what is my name');
    await waitMsg(p, '.msg.assistant', 'Your name is Ada');

    // the server side of the socket goes away: automatic reconnect, status shows it
    await p.evaluate(() => (window as W).parleyClient._debugDropSocket());
    await waitStatus(p, 'resumed after a drop');
    await waitMsg(p, '.msg.system', 'reconnected');
    await sendText(p, 'what is my name');
    await p.waitForFunction(() => [...document.querySelectorAll('.msg.assistant')].filter((el) => el.textContent?.includes('Your name is Ada')).length === 2);

    // Disconnect forgets the state: a reload starts clean
    await p.click('#disconnect');
    await waitStatus(p, 'disconnected');
    expect(await p.evaluate(() => sessionStorage.getItem('parley.demo'))).toBeNull();
    await p.reload({ waitUntil: 'load' });
    expect(await status(p)).toBe('not connected');
  });

  it('a stale stored state falls back to a fresh conversation', async () => {
    const p = await openDemo();
    await p.evaluate(() =>
      sessionStorage.setItem('parley.demo', JSON.stringify({ state: { version: 1, sessionId: 'demo-stale', resumeToken: 'rt_gone', savedAt: 0, modality: 'text' }, modality: 'text', transcript: [{ kind: 'user', text: 'old' }] })),
    );
    await p.reload({ waitUntil: 'load' });
    await waitStatus(p, 'connected · text');
    await waitMsg(p, '.msg.system', 'had expired');
    await waitMsg(p, '.msg.assistant', 'Hello');
    expect(await p.$$eval('.msg.user', (els) => els.length)).toBe(0);
  });

  it('voice: the greeting plays, Stop interrupts it, the talk button runs the microphone', async () => {
    const p = await openDemo();
    await p.select('#modality', 'voice');
    await p.select('#transport', 'ws');
    await p.click('#connect');
    await waitStatus(p, 'connected · voice');
    expect(await p.evaluate(() => (window as W).parleyClient.transport)).toBe('ws');
    expect(await p.$eval('#talk', (el) => (el as HTMLButtonElement).hidden)).toBe(false);
    await p.evaluate(() => {
      (window as W).heardMs = 0;
      (window as W).parleyClient.addEventListener('audio', (e: W) => ((window as W).heardMs += (e.detail.samples.length / e.detail.sr) * 1000));
    });
    await p.waitForFunction(() => (window as W).parleyClient.responding === true, { timeout: 8000 });
    // Let a few words be heard: 1.5 s of the reply's audio has reached the player.
    await p.waitForFunction(() => (window as W).heardMs >= 1500, { timeout: 8000 });
    await p.click('#stop');
    await p.waitForSelector('.msg.assistant.interrupted', { timeout: 5000 });
    // the corrected utterance: what was heard stays, the rest is shown as unheard
    await p.waitForSelector('.msg.assistant .unheard', { timeout: 5000 });

    await p.click('#talk');
    await p.waitForFunction(() => document.querySelector('#mic')?.textContent === 'on', { timeout: 5000 });
    await p.waitForFunction(() => document.querySelector('#agent-state')?.textContent === 'listening', { timeout: 5000 });
    expect(await p.$eval('#talk', (el) => el.getAttribute('aria-pressed'))).toBe('true');
    await p.click('#talk');
    expect(await p.$eval('#mic', (el) => el.textContent)).toBe('microphone off');
    // typed text in a voice session joins the conversation as user text
    await sendText(p, 'my name is Bea');
    await waitMsg(p, '.msg.user', 'my name is Bea');
    await waitMsg(p, '.msg.assistant', 'Nice to meet you, Bea');
  });
});
