import { fileURLToPath } from 'node:url';
import type { Page } from 'puppeteer-core';
import { describe, expect, it } from 'vitest';
import { chromiumAvailable } from './browser.ts';
import type { W } from './client-page.ts';
import { sendText, useDemoPage } from './demo-page.ts';

/**
 * The demo page's voice panel in headless Chromium against the real server (offline speech):
 * WebRTC by default, agent state, microphone level, status and device, the voice picker,
 * per-turn latency, the silent_mic warning, tool lines after a reload, and the notice when the
 * server has no recogniser.
 */

const SCREENSHOT = fileURLToPath(new URL('../demo/screenshot-voice.png', import.meta.url));
const ZEROS = fileURLToPath(new URL('../../fixtures/audio/zeros.wav', import.meta.url));

const text = (p: Page, selector: string) => p.$eval(selector, (el) => el.textContent ?? '');
const visible = (p: Page, selector: string) => p.$eval(selector, (el) => (el as HTMLElement).offsetParent !== null);
const waitText = (p: Page, selector: string, wanted: string, timeout = 10_000) =>
  p.waitForFunction((s, t) => document.querySelector(s)?.textContent?.includes(t) === true, { timeout }, selector, wanted);
/** Every text #agent-state shows from now on, in order. */
const recordStates = (p: Page) =>
  p.evaluate(() => {
    const seen: string[] = [];
    (window as W).states = seen;
    const pill = document.querySelector('#agent-state')!;
    new MutationObserver(() => seen.at(-1) !== pill.textContent && seen.push(pill.textContent ?? '')).observe(pill, { childList: true, characterData: true, subtree: true });
  });

describe.skipIf(!chromiumAvailable())('demo page: voice panel in Chromium', { timeout: 60_000 }, () => {
  const { openDemo } = useDemoPage({ LOCAL_LLM_WORD_DELAY_MS: '20' }, { media: true });

  it('a voice call goes over WebRTC by default and shows state, level, device, voice and latency', async () => {
    const p = await openDemo();
    await p.select('#modality', 'voice');
    expect(await p.$eval('#transport', (el) => (el as HTMLSelectElement).value)).toBe('webrtc');
    await p.click('#connect');
    await waitText(p, '#status', 'connected · voice');
    expect(await text(p, '#status')).toContain('WebRTC');
    expect(await p.evaluate(() => (window as W).parleyClient.transport)).toBe('webrtc');
    expect(await visible(p, '#voice-panel')).toBe(true);

    // The voice picker offers ready.voices with the session's voice selected; a change is confirmed.
    const ready = await p.evaluate(() => (window as W).parleyClient.ready);
    const options = await p.$$eval('#voice option', (els) => els.map((el) => (el as HTMLOptionElement).value));
    expect(options).toEqual(ready.voices.map((v: { voice: string }) => v.voice));
    expect(await p.$eval('#voice', (el) => (el as HTMLSelectElement).value)).toBe(ready.voice);
    await p.waitForFunction(() => (window as W).parleyClient.responding === false, { timeout: 15_000 }); // greeting done
    const confirmed = p.evaluate(() => new Promise((resolve) => (window as W).parleyClient.addEventListener('voice', (e: W) => resolve(e.detail), { once: true })));
    await p.select('#voice', 'rms');
    expect(await confirmed).toMatchObject({ voice: 'rms' });
    await waitText(p, '#status', 'voice Rms');

    // Talk: the fake microphone (a beep) moves the meter; the device list comes from the browser.
    await p.click('#talk');
    await waitText(p, '#mic', 'on');
    await waitText(p, '#agent-state', 'listening');
    await p.waitForFunction(() => parseFloat((document.querySelector('#level') as HTMLElement).style.width) > 0, { timeout: 5000 });
    const devices = await p.$$eval('#device option', (els) => els.map((el) => el.textContent));
    expect(devices[0]).toBe('system default');
    expect(devices.length).toBeGreaterThan(1);

    // The fake microphone beeps every second, which would cut in on replies: off for the question.
    await p.click('#talk');
    await waitText(p, '#mic', 'microphone off');
    await waitText(p, '#agent-state', 'ready');

    // A typed question in the voice call: thinking, then speaking, then ready again.
    await recordStates(p);
    await sendText(p, 'what is 6 times 7');
    await p.waitForFunction(() => [...document.querySelectorAll('.msg.assistant')].some((el) => el.textContent?.includes('42')), { timeout: 10_000 });
    await p.waitForFunction(() => ((window as W).states as string[]).at(-1) === 'ready', { timeout: 15_000 });
    const states = (await p.evaluate(() => (window as W).states)) as string[];
    expect(states.indexOf('thinking…')).toBeGreaterThanOrEqual(0);
    expect(states.indexOf('speaking')).toBeGreaterThan(states.indexOf('thinking…'));
    // Its latency, under the reply; the greeting has no input to measure from.
    const latencies = await p.$$eval('.msg.assistant .latency', (els) => els.map((el) => el.textContent));
    expect(latencies).toHaveLength(1);
    expect(latencies[0]).toMatch(/^\d+ ms to first word$/);

    if (process.env.PARLEY_SCREENSHOT === '1') {
      await p.click('#talk');
      await p.waitForFunction(() => parseFloat((document.querySelector('#level') as HTMLElement).style.width) > 20, { timeout: 5000 });
      await p.screenshot({ path: SCREENSHOT as `${string}.png`, fullPage: true });
    }
  });

  it('a Safari browser gets its voice call over the WebSocket', async () => {
    const p = await openDemo();
    await p.setUserAgent('Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15');
    await p.reload({ waitUntil: 'load' });
    await p.select('#modality', 'voice');
    expect(await p.$eval('#transport', (el) => (el as HTMLSelectElement).value)).toBe('webrtc');
    await p.click('#connect');
    await waitText(p, '#status', 'connected · voice');
    expect(await text(p, '#status')).toContain('WebSocket');
    expect(await p.evaluate(() => (window as W).parleyClient.transport)).toBe('ws');
  });

  it('a tool line stays below its reply after a reload', async () => {
    const p = await openDemo();
    await p.click('#connect');
    await waitText(p, '#status', 'connected');
    expect(await visible(p, '#voice-panel')).toBe(false); // a text session has no voice panel
    expect(await visible(p, '#transport')).toBe(false);
    await sendText(p, 'please get time');
    await p.waitForFunction(() => [...document.querySelectorAll('.msg.assistant')].some((el) => el.textContent?.includes('get_time succeeded')), { timeout: 10_000 });
    await p.waitForFunction(() => (window as W).parleyClient.responding === false, { timeout: 10_000 }); // the reply is whole
    const log = () => p.$$eval('#log .msg', (els) => els.map((el) => `${el.className.replace('msg ', '')}: ${el.firstChild?.textContent ?? ''}`));
    const before = await log();
    expect(before.map((line) => line.split(':')[0])).toEqual(['assistant', 'user', 'assistant', 'tool']);
    await p.reload({ waitUntil: 'load' });
    await waitText(p, '#status', 'resumed');
    expect(await log()).toEqual(before);
  });
});

describe.skipIf(!chromiumAvailable())('demo page: a microphone that sends only zeros', { timeout: 60_000 }, () => {
  const { openDemo } = useDemoPage({}, { media: true, args: [`--use-file-for-fake-audio-capture=${ZEROS}`] });

  it('shows the silent_mic warning', async () => {
    const p = await openDemo();
    await p.select('#modality', 'voice');
    await p.select('#transport', 'ws');
    await p.click('#connect');
    await waitText(p, '#status', 'connected · voice');
    await p.click('#talk');
    await waitText(p, '#mic', 'on');
    await p.waitForFunction(() => !(document.querySelector('#mic-warning') as HTMLElement).hidden, { timeout: 15_000 });
    expect(await text(p, '#mic-warning')).toMatch(/pure silence|barely audible/);
  });
});

describe.skipIf(!chromiumAvailable())('demo page: a server without a recogniser', { timeout: 30_000 }, () => {
  const reason = 'offline speech recognition needs Debian packages pocketsphinx and pocketsphinx-en-us';
  const { openDemo } = useDemoPage({}, {}, { voice: { ok: false, reason } });

  it('says why voice is off before anyone tries, and offers text only', async () => {
    const p = await openDemo();
    await p.waitForFunction(() => !(document.querySelector('#notice') as HTMLElement).hidden, { timeout: 5000 });
    expect(await text(p, '#notice')).toBe(`Voice is off on this server, text works: ${reason}`);
    expect(await p.$eval('#modality option[value=voice]', (el) => (el as HTMLOptionElement).disabled)).toBe(true);
    await p.click('#connect');
    await waitText(p, '#status', 'connected · text');
  });
});
