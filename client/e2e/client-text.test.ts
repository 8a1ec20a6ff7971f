import type { Browser, Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../signaling/testing/test-server.ts';
import { startSession, WsTestClient } from '../../signaling/testing/ws-test-client.ts';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { chromiumAvailable, closeChromium, launchChromium } from './browser.ts';
import { clearWire, events, makeClient, openClientPage, say, waitEvent, waitQuiet, waitSocketsClosed, wireFrames, type W } from './client-page.ts';

/**
 * The library's connection, events and every JSON sender, in headless Chromium against the real
 * server (offline language model, text modality unless a test says otherwise).
 */


const TOOLS = [
  { name: 'get_time', description: 'The current time.', parameters: { type: 'object', properties: {} } },
  { name: 'slow_job', description: 'A long job.', parameters: { type: 'object', properties: {} }, deferrable: true },
];

describe.skipIf(!chromiumAvailable())('RealtimeClient in Chromium: connection, events, senders', { timeout: 30_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ LOCAL_LLM_WORD_DELAY_MS: '2' });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await closeChromium(browser);
    await server?.stop();
  });

  async function open(userAgent?: string): Promise<Page> {
    page = await openClientPage(browser, server, userAgent ? { userAgent } : {});
    pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    return page;
  }

  afterEach(async () => {
    expect(pageErrors).toEqual([]);
    await page?.close();
  });

  const make = (p: Page, options: Record<string, unknown> = {}) => makeClient(p, options);

  it('generates a session id, sends the SPEC start frame, chats, and tracks responding', async () => {
    const p = await open();
    const result = await p.evaluate(async (key) => {
      const P = await (window as W).lib();
      const c = new P.RealtimeClient({
        url: `ws://${location.host}/ws`,
        apiKey: key,
        mode: { modality: 'text', instructions: 'Be brief.' },
        user: 'user-42',
        timezone: 'Europe/Paris',
      });
      const responding: boolean[] = [];
      c.addEventListener('turn', () => responding.push(c.responding));
      c.addEventListener('done', () => responding.push(c.responding));
      const deltas: string[] = [];
      c.addEventListener('text_delta', (e: W) => deltas.push(e.detail.delta));
      const idBefore = c.sessionId;
      const ready = await c.connect({ temperature: 0.3, noGreeting: true });
      const said = new Promise((resolve) => c.addEventListener('utterance', (e: W) => resolve(e.detail.text), { once: true }));
      const done = new Promise((resolve) => c.addEventListener('done', resolve, { once: true }));
      const sent = c.sendText('what is 6 times 7');
      const [utterance] = await Promise.all([said, done]);
      const out = {
        idBefore,
        id: c.sessionId,
        modality: ready.modality,
        sent,
        utterance,
        deltas: deltas.join(''),
        responding,
        mode: c.mode,
        state: c.state,
        transport: c.transport,
        emptyText: c.sendText(''),
        tooLong: c.sendText('x'.repeat(20001)),
      };
      c.close();
      return out;
    }, server.key);
    expect(result.id).toMatch(/^s_[0-9a-f]{24}$/);
    expect(result.id).toBe(result.idBefore);
    expect(result.modality).toBe('text');
    expect(result.sent).toBe(true);
    expect(result.utterance).toContain('42');
    expect(result.deltas).toBe(result.utterance);
    expect(result.responding).toEqual([true, false]);
    expect(result.mode).toMatchObject({ kind: 'service', modality: 'text', instructions: 'Be brief.', temperature: 0.3, greeting: false });
    expect(result.state).toBe('open');
    expect(result.transport).toBe('ws');
    expect(result.emptyText).toBe(false);
    expect(result.tooLong).toBe(false);

    const [start] = await wireFrames(p, 'start');
    expect(start).toEqual({
      type: 'start',
      session_id: result.id,
      api_key: server.key,
      mode: { kind: 'service', modality: 'text', instructions: 'Be brief.', temperature: 0.3, greeting: false },
      client: { name: 'parley-client', version: '0.1.0', user: 'user-42', timezone: 'Europe/Paris', user_agent: expect.stringContaining('Chrome') },
    });
    expect(await wireFrames(p, 'input_text')).toEqual([{ type: 'input_text', text: 'what is 6 times 7' }]);
  });

  it('connect() rejects with the error frame code; the error is dispatched; senders return false', async () => {
    const p = await open();
    await make(p, { apiKey: 'ck_bogus_0000000000000000' });
    const refusal = await p.evaluate(async () => {
      const c = (window as W).client;
      return c.connect().then(() => null, (e: W) => ({ name: e.name, code: e.code, retryable: e.retryable, isError: e instanceof (window as W).P.RealtimeError }));
    });
    // The server closes the socket after its error frame.
    await waitSocketsClosed(p);
    const result = { err: refusal, ...(await p.evaluate(() => {
      const c = (window as W).client;
      return { sent: c.sendText('hi'), voice: c.setVoice('kal'), state: c.state };
    })) };
    expect(result.err).toEqual({ name: 'RealtimeError', code: 'unauthorized', retryable: false, isError: true });
    expect(await events(p, 'error')).toMatchObject([{ code: 'unauthorized', retryable: false }]);
    expect(result.sent).toBe(false);
    expect(result.voice).toBe(false);
    expect(result.state).toBe('idle');

    // connect() twice: the second one is refused while the first is live.
    await make(p);
    const twice = await p.evaluate(async () => {
      const c = (window as W).client;
      await c.connect({ noGreeting: true });
      return c.connect().then(() => 'resolved', (e: W) => e.code);
    });
    expect(twice).toBe('already_connected');
  });

  it('every conversation sender produces its wire frame and the server acts on it', async () => {
    const p = await open();
    await make(p, { mode: { greeting: false, tools: TOOLS } });
    const ready = await p.evaluate(() => (window as W).client.connect());
    const other = ready.voices.find((v: W) => v.voice !== ready.voice).voice as string;

    // set_voice → voice
    expect(await p.evaluate((v) => (window as W).client.setVoice(v), other)).toBe(true);
    expect(await waitEvent(p, 'voice')).toMatchObject({ voice: other });
    expect(await p.evaluate(() => (window as W).client.mode.voice)).toBe(other);

    // inject_context (context, no reply) → ack matched by message_id
    const ack = await p.evaluate(() => (window as W).client.injectContext('The user likes tea.', { role: 'context', reply: false, messageId: 'ctx-1' }));
    expect(ack).toMatchObject({ type: 'inject_context_ack', message_id: 'ctx-1', accepted: true, role: 'context', reply_started: false });
    // inject_context (user, default role) → ack with a reply, generated message id
    const userAck = await p.evaluate(() => (window as W).client.injectContext('my name is Ada'));
    expect(userAck).toMatchObject({ accepted: true, role: 'user', reply_started: true });
    expect(userAck.message_id).toMatch(/^m_[0-9a-f]{16}$/);
    await waitEvent(p, 'utterance', { turn_id: userAck.turn_id });
    expect(await wireFrames(p, 'inject_context')).toEqual([
      { type: 'inject_context', message_id: 'ctx-1', text: 'The user likes tea.', role: 'context', reply: false },
      { type: 'inject_context', message_id: userAck.message_id, text: 'my name is Ada', role: 'user' },
    ]);

    // set_tool_choice one-shot forces the tool on the next user turn only
    expect(await p.evaluate(() => (window as W).client.setToolChoice({ tool: 'get_time' }, { oneShot: true }))).toBe(true);
    await p.evaluate(() => (window as W).client.sendText('hello there'));
    const call = await waitEvent(p, 'tool_call', { name: 'get_time' });
    await p.evaluate(
      (id) => {
        const c = (window as W).client;
        return c.sendToolResult(id, { time: '12:00' }, { outcome: 'succeeded', verified: true });
      },
      call.id,
    );
    expect(await waitEvent(p, 'utterance', { textIncludes: 'Done: get_time succeeded' })).toBeTruthy();
    expect(await say(p, 'hello again')).toContain('Hello');
    expect((await events(p, 'tool_call')).length).toBe(1);
    expect(await p.evaluate(() => (window as W).client.mode.tool_choice)).toBeUndefined();

    // a lasting choice: none, then back to auto; it is part of the mode sent again on reconnect
    await p.evaluate(() => (window as W).client.setToolChoice('none'));
    expect(await p.evaluate(() => (window as W).client.mode.tool_choice)).toBe('none');
    await say(p, 'please get time');
    expect((await events(p, 'tool_call')).length).toBe(1);
    await p.evaluate(() => (window as W).client.setToolChoice('auto'));

    // tool_deferred → tool_deferred_ack; tool_cancel by handle
    await p.evaluate(() => (window as W).client.sendText('please run slow job'));
    const slow = await waitEvent(p, 'tool_call', { name: 'slow_job' });
    await p.evaluate((id) => {
      const c = (window as W).client;
      c.sendToolProgress(id, 'halfway');
      c.sendToolPartialResult(id, { done: 0.5 });
      c.sendToolPartialResult(id, { done: 0.6 }, { reply: false, interaction: { id: 'ask-1', prompt: 'Keep going?', options: ['yes', 'no'] } });
      c.sendToolDeferred(id, { handle: 'job-7', statusLabel: 'Crunching' });
    }, slow.id);
    expect(await waitEvent(p, 'tool_deferred_ack')).toMatchObject({ accepted: true, id: slow.id, handle: 'job-7', status_label: 'Crunching' });
    await p.evaluate(() => (window as W).client.sendToolCancel('job-7'));
    // The cancelled job is voiced over; let the floor come free before asking for a reply.
    await waitQuiet(p, 400);

    // raw frames, ambience state, reset
    const before = (await events(p, 'turn')).length;
    const doneBefore = (await events(p, 'done')).length;
    expect(await p.evaluate(() => (window as W).client.sendRawFrame({ type: 'trigger_reply' }))).toBe(true);
    await p.waitForFunction((n) => (window as W).client.log.filter((e: W) => e.type === 'turn').length > n, {}, before);
    expect(await p.evaluate(() => (window as W).client.sendAmbienceState(true))).toBe(true);
    // The triggered reply ends before the reset, so the reset starts from a quiet floor.
    await p.waitForFunction((n) => (window as W).client.log.filter((e: W) => e.type === 'done').length > n, {}, doneBefore);
    expect(await p.evaluate(() => (window as W).client.reset())).toBe(true);
    expect(await say(p, 'what is my name')).toContain("haven't told me");

    const tools = await wireFrames(p);
    const pick = (type: string) => tools.filter((f) => f.type === type);
    expect(pick('set_voice')).toEqual([{ type: 'set_voice', voice: other }]);
    expect(pick('set_tool_choice')).toEqual([
      { type: 'set_tool_choice', tool_choice: { tool: 'get_time' }, one_shot: true },
      { type: 'set_tool_choice', tool_choice: 'none', one_shot: false },
      { type: 'set_tool_choice', tool_choice: 'auto', one_shot: false },
    ]);
    expect(pick('tool_progress')).toEqual([{ type: 'tool_progress', id: slow.id, note: 'halfway' }]);
    expect(pick('tool_partial_result')).toEqual([
      { type: 'tool_partial_result', id: slow.id, content: { done: 0.5 } },
      { type: 'tool_partial_result', id: slow.id, content: { done: 0.6 }, reply: false, interaction: { id: 'ask-1', prompt: 'Keep going?', options: ['yes', 'no'] } },
    ]);
    expect(pick('tool_result')).toEqual([{ type: 'tool_result', id: call.id, content: { time: '12:00' }, outcome: 'succeeded', verified: true }]);
    expect(pick('tool_deferred')).toEqual([{ type: 'tool_deferred', id: slow.id, handle: 'job-7', status_label: 'Crunching' }]);
    expect(pick('tool_cancel')).toEqual([{ type: 'tool_cancel', id: 'job-7' }]);
    expect(pick('trigger_reply')).toEqual([{ type: 'trigger_reply' }]);
    expect(pick('ambience')).toEqual([{ type: 'ambience', active: true }]);
    expect(pick('reset')).toEqual([{ type: 'reset' }]);
    // The server accepted all of it: no error frame.
    expect(await events(p, 'error')).toEqual([]);
    // A binary raw frame goes out as is (a text session refuses audio, which proves it arrived).
    expect(await p.evaluate(() => (window as W).client.sendRawFrame(new Int16Array(320)))).toBe(true);
    expect(await waitEvent(p, 'error')).toMatchObject({ code: 'modality_mismatch' });
    expect(await p.evaluate(() => (window as W).client.ready.type)).toBe('ready');

    // wrap_up → sign-off, then a clean close 1000 'idle' → session_end; the resume state is gone
    expect(await p.evaluate(() => (window as W).client.requestWrapUp('user is done'))).toBe(true);
    expect(await waitEvent(p, 'session_end')).toEqual({ code: 1000, reason: 'idle' });
    expect(await wireFrames(p, 'wrap_up')).toEqual([{ type: 'wrap_up', reason: 'user is done' }]);
    expect(await waitEvent(p, 'close')).toEqual({ code: 1000, reason: 'idle' });
    expect(await p.evaluate(() => (window as W).client.exportResumeState())).toBeNull();
    expect((await events(p, 'resume_state')).at(-1)).toEqual({ state: null });
    expect(await p.evaluate(() => (window as W).client.state)).toBe('closed');
  });

  it('acknowledgement waits time out cleanly when the server never answers', async () => {
    const p = await open();
    await make(p, { mode: { greeting: false } });
    const notConnected = await p.evaluate(() =>
      Promise.all([
        (window as W).client.injectContext('x').catch((e: W) => e.code),
        (window as W).client.sendToolInteractionUpdate('call_1', 'ask-1', 'resolved').catch((e: W) => e.code),
      ]),
    );
    expect(notConnected).toEqual(['not_connected', 'not_connected']);
    await p.evaluate(() => (window as W).client.connect());
    // An over-long inject is refused with a per-frame error: no ack ever comes. An update is
    // always acknowledged (SPEC), even with an over-long note, which the server cuts to 200.
    const result = await p.evaluate(async () => {
      const c = (window as W).client;
      const t0 = performance.now();
      const inject = await c.injectContext('x'.repeat(20001), { messageId: 'too-long', timeoutMs: 300 }).then(
        () => 'resolved',
        (e: W) => ({ code: e.code, retryable: e.retryable }),
      );
      const update = await c.sendToolInteractionUpdate('call_1', 'ask-1', 'resolved', { note: 'n'.repeat(201), timeoutMs: 300 }).then(
        (ack: W) => ({ applied: ack.applied, reason: ack.reason }),
        (e: W) => ({ code: e.code }),
      );
      const elapsed = performance.now() - t0;
      const narration = await c.waitForNarrationState('job_none', ['resolved', 'cancelled'], { timeoutMs: 200 }).then(
        () => 'resolved',
        (e: W) => e.code,
      );
      // Nothing leaked: the next request is matched normally.
      const ok = await c.injectContext('fine', { role: 'context', messageId: 'after' });
      return { inject, update, elapsed, narration, ok, job: c.narrationState('job_none'), ask: c.interactionState('ask-1') };
    });
    expect(result.inject).toEqual({ code: 'ack_timeout', retryable: true });
    expect(result.update).toEqual({ applied: false, reason: 'unknown_interaction' });
    expect(result.elapsed).toBeLessThan(2000);
    expect(result.narration).toBe('narration_timeout');
    expect(result.ok).toMatchObject({ message_id: 'after', accepted: true });
    expect(result.job).toBeNull();
    expect(result.ask).toBeNull();
    expect(await wireFrames(p, 'tool_interaction_update')).toEqual([
      { type: 'tool_interaction_update', id: 'call_1', interaction_id: 'ask-1', state: 'resolved', note: 'n'.repeat(201) },
    ]);
    expect((await events(p, 'error')).map((e) => e.code)).toEqual(['invalid_frame']);
  });

  it('interactions: narration states are tracked and sendToolInteractionUpdate resolves with its ack', async () => {
    const p = await open();
    await make(p, { mode: { greeting: false, tools: [{ name: 'book', parameters: { type: 'object', properties: {} } }] } });
    await p.evaluate(() => (window as W).client.connect());
    await p.evaluate(() => (window as W).client.sendText('please book'));
    const call = await waitEvent(p, 'tool_call', { name: 'book' });
    const result = await p.evaluate(async (id) => {
      const c = (window as W).client;
      c.sendToolPartialResult(id, { step: 1 }, { interaction: { id: 'ask-1', prompt: 'Which day?', options: ['monday', 'tuesday'] } });
      const reached = await c.waitForNarrationState(id, ['queued', 'started'], { timeoutMs: 5000 });
      const during = { job: c.narrationState(id), ask: c.interactionState('ask-1') };
      const applied = await c.sendToolInteractionUpdate(id, 'ask-1', 'resolved', { note: 'picked in the UI' });
      const duplicate = await c.sendToolInteractionUpdate(id, 'ask-1', 'resolved');
      const closed = await c.waitForNarrationState(id, 'resolved', { timeoutMs: 5000 });
      return { reached, during, applied, duplicate, closed, after: c.interactionState('ask-1') };
    }, call.id);
    expect(['queued', 'started']).toContain(result.reached);
    expect(result.during).toEqual({ job: result.reached, ask: result.reached });
    expect(result.applied).toEqual({ type: 'tool_interaction_update_ack', id: call.id, interaction_id: 'ask-1', state: 'resolved', applied: true, reason: null });
    expect(result.duplicate).toMatchObject({ interaction_id: 'ask-1', applied: false, reason: 'already_closed' });
    expect(result.closed).toBe('resolved');
    expect(result.after).toBe('resolved');
  });

  it('reconnects after an abnormal drop and resumes the same conversation', async () => {
    const p = await open();
    await make(p, { mode: { greeting: false }, reconnectBaseMs: 50 });
    await p.evaluate(() => (window as W).client.connect());
    await say(p, 'my name is Ada');
    const first = await p.evaluate(() => (window as W).client.exportResumeState());
    expect(first).toMatchObject({ version: 1, resumeToken: expect.stringMatching(/^rt_/), modality: 'text' });
    await clearWire(p);

    expect(await p.evaluate(() => (window as W).client._debugDropSocket())).toBe(true);
    expect(await waitEvent(p, 'reconnecting')).toMatchObject({ attempt: 1, code: 4000 });
    expect(await waitEvent(p, 'reconnected')).toEqual({ attempt: 1, resumed: true });
    const [start] = await wireFrames(p, 'start');
    expect(start).toMatchObject({ resume_token: first.resumeToken, session_id: first.sessionId });
    const states = await events(p, 'resume_state');
    expect(states).toHaveLength(2);
    expect(states[1].state.resumeToken).not.toBe(first.resumeToken);
    expect(await say(p, 'what is my name')).toContain('Your name is Ada');
    expect(await events(p, 'close')).toEqual([]);
  });

  it('without autoReconnect a drop ends the conversation (the state stays resumable)', async () => {
    const p = await open();
    await make(p, { mode: { greeting: false }, autoReconnect: false });
    await p.evaluate(() => (window as W).client.connect());
    await p.evaluate(() => (window as W).client._debugDropSocket(4321));
    expect(await waitEvent(p, 'close')).toMatchObject({ code: 4321 });
    expect(await events(p, 'reconnecting')).toEqual([]);
    expect(await events(p, 'session_end')).toEqual([]);
    expect(await p.evaluate(() => (window as W).client.exportResumeState())).not.toBeNull();
  });

  it('gives up after maxReconnectAttempts, delays bounded by reconnectBaseMs and reconnectMaxMs', async () => {
    const p = await open();
    await make(p, { mode: { greeting: false }, reconnectBaseMs: 40, reconnectMaxMs: 60, maxReconnectAttempts: 3 });
    await p.evaluate(() => (window as W).client.connect());
    await p.evaluate(() => {
      // Every later socket goes to a closed port: each reconnect attempt fails at once.
      const Real = WebSocket;
      (window as W).WebSocket = class extends Real {
        constructor() {
          super('ws://127.0.0.1:9/ws');
        }
      };
      (window as W).client._debugDropSocket();
    });
    const failed = await waitEvent(p, 'failed', {}, 5000);
    expect(failed).toMatchObject({ code: 'reconnect_exhausted', error: { code: 'reconnect_exhausted', name: 'RealtimeError' } });
    const attempts = await events(p, 'reconnecting');
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(attempts[0].delay_ms).toBeGreaterThanOrEqual(20);
    expect(attempts[0].delay_ms).toBeLessThanOrEqual(40);
    for (const a of attempts.slice(1)) expect(a.delay_ms).toBeLessThanOrEqual(60);
    expect(await waitEvent(p, 'close')).toMatchObject({ code: 4000 });
  });

  it('a resume_failed while reconnecting is terminal: the token is cleared and retrying stops', async () => {
    const p = await open();
    const sessionId = await make(p, { mode: { greeting: false }, reconnectBaseMs: 1500 });
    await p.evaluate(() => (window as W).client.connect());
    const state = await p.evaluate(() => (window as W).client.exportResumeState());
    await p.evaluate(() => (window as W).client._debugDropSocket());
    await waitEvent(p, 'reconnecting');
    // Someone else spends the single-use token first (same account and session id).
    const thief = await startSession(server.wsUrl, {
      session_id: sessionId,
      api_key: server.scopedKey(sessionId, { account: 'dev' }),
      mode: { kind: 'service', modality: 'text', greeting: false },
      resume_token: state.resumeToken,
    });
    expect(thief.ready.type).toBe('ready');
    thief.client.close();
    expect(await waitEvent(p, 'resume_failed')).toEqual({ error: { code: 'resume_failed', retryable: false, detail: expect.any(String) } });
    await waitEvent(p, 'close', {}, 5000);
    await new Promise((r) => setTimeout(r, 800));
    expect((await events(p, 'reconnecting')).length).toBe(1);
    expect((await events(p, 'resume_state')).at(-1)).toEqual({ state: null });
    expect(await p.evaluate(() => (window as W).client.exportResumeState())).toBeNull();
  });

  it('a page reload resumes from exported state (resumeState option or importResumeState)', async () => {
    const p = await open();
    await make(p, { mode: { greeting: false } });
    await p.evaluate(() => (window as W).client.connect());
    await say(p, 'my name is Grace');
    const state = await p.evaluate(() => (window as W).client.exportResumeState());
    await p.reload({ waitUntil: 'load' }); // the browser closes the socket with 1001: the server stashes the call

    await make(p, { mode: { greeting: false }, resumeState: state });
    await p.evaluate(() => (window as W).client.connect());
    expect(await say(p, 'what is my name')).toContain('Grace');
    const rotated = await p.evaluate(() => (window as W).client.exportResumeState());
    expect(rotated.resumeToken).not.toBe(state.resumeToken);
    expect(rotated.sessionId).toBe(state.sessionId);

    // Again, with importResumeState() on a client whose session id was generated.
    await p.reload({ waitUntil: 'load' });
    const name = await p.evaluate(async (s) => {
      const P = await (window as W).lib();
      const c = new P.RealtimeClient({ url: `ws://${location.host}/ws`, apiKey: await (window as W).mintKey(s.sessionId), mode: { modality: 'text', greeting: false } });
      c.importResumeState(s);
      const sid = c.sessionId;
      await c.connect();
      const reply = new Promise((resolve) => c.addEventListener('utterance', (e: W) => resolve(e.detail.text)));
      c.sendText('what is my name');
      const text = await reply;
      c.close();
      return { sid, text };
    }, rotated);
    expect(name).toEqual({ sid: state.sessionId, text: expect.stringContaining('Grace') });
  });

  it('a stale import makes connect() reject with resume_failed and clears the state; a fresh connect works', async () => {
    const p = await open();
    const sessionId = await make(p, { mode: { greeting: 'Welcome back.' } });
    const result = await p.evaluate(async (sid) => {
      const c = (window as W).client;
      const invalid = (() => {
        try {
          c.importResumeState({ nope: true });
          return 'accepted';
        } catch (e: W) {
          return e.code;
        }
      })();
      c.importResumeState({ version: 1, sessionId: sid, resumeToken: 'rt_stale_token', savedAt: Date.now() - 600_000, modality: 'text' });
      const exported = c.exportResumeState();
      const err = await c.connect().then(() => null, (e: W) => ({ code: e.code, retryable: e.retryable }));
      const after = c.exportResumeState();
      const ready = await c.connect();
      let late = 'accepted';
      try {
        c.importResumeState(null);
      } catch (e: W) {
        late = e.code;
      }
      return { invalid, exported, err, after, readyType: ready.type, late };
    }, sessionId);
    expect(result.invalid).toBe('resume_state_rejected');
    expect(result.exported).toMatchObject({ resumeToken: 'rt_stale_token' });
    expect(result.err).toEqual({ code: 'resume_failed', retryable: false });
    expect(result.after).toBeNull();
    expect(result.readyType).toBe('ready');
    expect(result.late).toBe('resume_state_rejected');
    expect(await events(p, 'resume_failed')).toEqual([{ error: { code: 'resume_failed', retryable: false, detail: expect.any(String) } }]);
    expect((await events(p, 'resume_state')).map((e) => e.state?.resumeToken ?? null)).toEqual([null, expect.stringMatching(/^rt_/)]);
    expect(await waitEvent(p, 'utterance', { textIncludes: 'Welcome back.' })).toBeTruthy();

    // A state for another session id is refused when the client's id was given explicitly.
    const mismatch = await p.evaluate(async () => {
      const P = (window as W).P;
      try {
        new P.RealtimeClient({ url: 'ws://x/ws', sessionId: 'mine', resumeState: { version: 1, sessionId: 'theirs', resumeToken: 'rt_x', savedAt: 1, modality: 'text' } });
        return 'accepted';
      } catch (e: W) {
        return e.code;
      }
    });
    expect(mismatch).toBe('resume_state_rejected');
    const otherModality = await p.evaluate(() => {
      try {
        new (window as W).P.RealtimeClient({ url: 'ws://x/ws', mode: { modality: 'voice' }, resumeState: { version: 1, sessionId: 's1', resumeToken: 'rt_x', savedAt: 1, modality: 'text' } });
        return 'accepted';
      } catch (e: W) {
        return e.code;
      }
    });
    expect(otherModality).toBe('resume_state_rejected');
  });

  it('close() ends cleanly and clears the resume state; closeAndWait() waits for the handshake', async () => {
    const p = await open();
    const sessionId = await make(p, { mode: { greeting: false } });
    await p.evaluate(() => (window as W).client.connect());
    const state = await p.evaluate(() => (window as W).client.exportResumeState());
    const closed = await p.evaluate(async () => {
      const c = (window as W).client;
      const ok = await c.closeAndWait(2000);
      return { ok, state: c.exportResumeState(), phase: c.state, again: await c.closeAndWait(10) };
    });
    expect(closed).toEqual({ ok: true, state: null, phase: 'closed', again: true });
    expect(await events(p, 'close')).toEqual([{ code: 1000, reason: 'client closed' }]);
    expect(await events(p, 'session_end')).toEqual([]);
    expect((await events(p, 'resume_state')).at(-1)).toEqual({ state: null });
    // 1000 from the client: nothing was stashed, the old token is dead.
    const probe = await WsTestClient.open(server.wsUrl);
    probe.send({ type: 'start', session_id: sessionId, api_key: server.scopedKey(sessionId, { account: 'dev' }), mode: { kind: 'service', modality: 'text' }, resume_token: state.resumeToken });
    expect(await probe.waitFor('error')).toMatchObject({ code: 'resume_failed' });
    probe.close();

    // close() on a client that never connected is harmless.
    await make(p);
    expect(await p.evaluate(() => (window as W).client.close())).toBeUndefined();
  });

  it('rawAssist reports every frame in and out; off by default', async () => {
    const p = await open();
    await make(p, { mode: { greeting: false }, rawAssist: true });
    await p.evaluate(() => (window as W).client.connect());
    await say(p, 'hello');
    const raw = await events(p, 'raw');
    expect(raw.filter((r) => r.direction === 'out').map((r) => r.type)).toEqual(['start', 'input_text']);
    expect(raw.filter((r) => r.direction === 'in').map((r) => r.type)).toEqual(expect.arrayContaining(['ready', 'asr', 'turn', 'text_delta', 'utterance', 'done']));

    await make(p, { mode: { greeting: false } });
    await p.evaluate(() => (window as W).client.connect());
    await say(p, 'hello');
    expect(await events(p, 'raw')).toEqual([]);
  });

  it('a WebKit user agent asking for WebRTC falls back to the WebSocket and drops background_audio', async () => {
    const SAFARI = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
    const p = await open(SAFARI);
    await make(p, { transport: 'webrtc', mode: { modality: 'voice', greeting: false, background_audio: true } });
    const result = await p.evaluate(async () => {
      const c = (window as W).client;
      const ready = await c.connect();
      return { transport: c.transport, modality: ready.modality, mode: c.mode };
    });
    expect(result.transport).toBe('ws');
    expect(result.modality).toBe('voice');
    expect(result.mode.background_audio).toBeUndefined();
    const [start] = await wireFrames(p, 'start');
    expect(start!.transport).toBeUndefined();
    expect(start!.mode).toEqual({ kind: 'service', modality: 'voice', greeting: false });
    expect(start!.client).toMatchObject({ user_agent: SAFARI });
    expect(await wireFrames(p, 'webrtc_offer')).toEqual([]);
  });

  // Needs the server's one-shot report endpoint: on /ws, a first frame of type feedback or
  // client_error stored under DATA_DIR and answered with feedback_ack / client_error_ack {id}.
  it('sendFeedback and sendClientError against the real server, after the conversation closed', async () => {
    const p = await open();
    const sessionId = await make(p, { mode: { greeting: false } });
    await p.evaluate(() => (window as W).client.connect());
    await p.evaluate(() => (window as W).client.closeAndWait());
    const result = await p.evaluate(async (sid) => {
      const P = (window as W).P;
      const apiKey = await (window as W).mintKey(sid);
      const url = `ws://${location.host}/ws`;
      const feedback = await P.sendFeedback({ url, sessionId: sid, rating: 5, text: 'great', device: 'laptop', browser: 'chromium', apiKey });
      const report = await P.RealtimeClient.sendClientError({ url, sessionId: sid, detail: 'mic failed', context: { code: 'capture_stalled' }, apiKey });
      return { feedback, report };
    }, sessionId);
    expect(result.feedback.id).toEqual(expect.any(String));
    expect(result.report.id).toEqual(expect.any(String));
  });

  it('sendFeedback and sendClientError use their own socket with the documented frames (stand-in endpoint)', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    const received: unknown[] = [];
    wss.on('connection', (ws) => {
      ws.once('message', (data) => {
        const frame = JSON.parse(String(data)) as { type: string; rating?: number };
        received.push(frame);
        if (frame.type === 'feedback' && frame.rating === 0) ws.send(JSON.stringify({ type: 'error', code: 'invalid_feedback', detail: 'rating out of range', retryable: false }));
        else if (frame.type === 'feedback' && frame.rating === 9) return; // never answers
        else ws.send(JSON.stringify({ type: `${frame.type}_ack`, id: `${frame.type}-1` }));
      });
    });
    try {
      const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`;
      const p = await open();
      await make(p, { mode: { greeting: false } });
      await p.evaluate(() => (window as W).client.connect());
      await p.evaluate(() => (window as W).client.closeAndWait());
      const result = await p.evaluate(async (u) => {
        const P = (window as W).P;
        const feedback = await P.sendFeedback({ url: u, sessionId: 's1', rating: 4, text: 'nice', device: 'laptop', browser: 'chromium', apiKey: 'k1' });
        const report = await P.RealtimeClient.sendClientError({ url: u, sessionId: 's1', detail: 'mic failed', context: { code: 'capture_stalled' }, apiKey: 'k1' });
        const refused = await P.sendFeedback({ url: u, sessionId: 's1', rating: 0 }).catch((e: W) => ({ code: e.code, retryable: e.retryable }));
        const silent = await P.sendFeedback({ url: u, sessionId: 's1', rating: 9, timeoutMs: 200 }).catch((e: W) => e.code);
        const nowhere = await P.sendClientError({ url: 'ws://127.0.0.1:9/ws', sessionId: 's1', detail: 'x' }).catch((e: W) => e.code);
        return { feedback, report, refused, silent, nowhere };
      }, url);
      expect(result).toEqual({
        feedback: { id: 'feedback-1' },
        report: { id: 'client_error-1' },
        refused: { code: 'invalid_feedback', retryable: false },
        silent: 'ack_timeout',
        nowhere: 'connection_closed',
      });
      expect(received).toEqual([
        { type: 'feedback', session_id: 's1', rating: 4, text: 'nice', device: 'laptop', browser: 'chromium', api_key: 'k1' },
        { type: 'client_error', session_id: 's1', detail: 'mic failed', context: { code: 'capture_stalled' }, api_key: 'k1' },
        { type: 'feedback', session_id: 's1', rating: 0 },
        { type: 'feedback', session_id: 's1', rating: 9 },
      ]);
    } finally {
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    }
  });
});
