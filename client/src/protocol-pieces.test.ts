import { afterEach, describe, expect, it, vi } from 'vitest';
import { StartFrame } from '../../session/protocol/start.ts';
import { EchoGuard } from './echo-guard.ts';
import { RealtimeError } from './errors.ts';
import { NarrationTracker } from './narration-tracker.ts';
import { PendingAcks } from './pending-acks.ts';
import { createResumeState, parseResumeState } from './resume-state.ts';
import { buildStartFrame, effectiveMode, generateSessionId } from './start-frame.ts';
import { effectiveTransport, isWebKitOnly } from './user-agent.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('PendingAcks', () => {
  it('resolves by exact match first, then by the fallback matchers, in send order', async () => {
    const acks = new PendingAcks<{ id: string; iid: string }, string>();
    const a = acks.wait({ id: 'c1', iid: 'i1' }, 1000, 'ack');
    const b = acks.wait({ id: 'c2', iid: 'i2' }, 1000, 'ack');
    const c = acks.wait({ id: 'c3', iid: 'i3' }, 1000, 'ack');
    // canonical id differs from what was sent (a deferred handle), interaction id matches
    expect(acks.settle('second', (m) => m.id === 'job-handle' && m.iid === 'i2', (m) => m.iid === 'i2')).toBe(true);
    // nothing identifies the request (malformed id echoed as null): oldest first
    expect(acks.settle('first', (m) => m.iid === 'nope', () => true)).toBe(true);
    expect(acks.settle('third', (m) => m.id === 'c3')).toBe(true);
    expect(await Promise.all([a, b, c])).toEqual(['first', 'second', 'third']);
    expect(acks.settle('late', () => true)).toBe(false);
    expect(acks.size).toBe(0);
  });

  it('times out cleanly: rejects with ack_timeout and forgets the entry', async () => {
    vi.useFakeTimers();
    const acks = new PendingAcks<string, string>();
    const p = acks.wait('m1', 50, 'inject_context_ack');
    const caught = p.catch((e: unknown) => e);
    vi.advanceTimersByTime(60);
    const error = (await caught) as RealtimeError;
    expect(error).toBeInstanceOf(RealtimeError);
    expect(error.code).toBe('ack_timeout');
    expect(error.retryable).toBe(true);
    expect(acks.size).toBe(0);
    expect(acks.settle('late', (m) => m === 'm1')).toBe(false);
  });

  it('rejects everything waiting when the connection goes', async () => {
    const acks = new PendingAcks<string, string>();
    const all = [acks.wait('a', 1000, 'x'), acks.wait('b', 1000, 'x')].map((p) => p.catch((e: Error) => e.message));
    acks.rejectAll(new Error('gone'));
    expect(await Promise.all(all)).toEqual(['gone', 'gone']);
  });
});

describe('NarrationTracker', () => {
  const frame = (state: 'queued' | 'started' | 'resolved' | 'cancelled', jobIds: string[], interactionIds: string[]) =>
    ({ type: 'tool_job_narration', state, job_ids: jobIds, interaction_ids: interactionIds, kind: 'interaction' }) as const;

  it('tracks the latest state per job and per interaction', () => {
    const t = new NarrationTracker();
    expect(t.jobState('call_1')).toBeNull();
    t.onFrame(frame('queued', ['call_1'], ['call_1#i1']));
    t.onFrame(frame('started', ['call_1', 'call_2'], ['call_1#i1', 'ask-2']));
    expect(t.jobState('call_1')).toBe('started');
    expect(t.jobState('call_2')).toBe('started');
    expect(t.interactionState('ask-2')).toBe('started');
    t.clear();
    expect(t.interactionState('ask-2')).toBeNull();
  });

  it('waits for one of several states, resolves at once when already there, rejects on timeout', async () => {
    vi.useFakeTimers();
    const t = new NarrationTracker();
    const waiting = t.waitFor('call_1', ['resolved', 'cancelled'], 1000);
    t.onFrame(frame('started', ['call_1'], ['i']));
    t.onFrame(frame('cancelled', ['call_1'], ['i']));
    expect(await waiting).toBe('cancelled');
    expect(await t.waitFor('call_1', 'cancelled', 10)).toBe('cancelled');
    const late = t.waitFor('call_9', 'resolved', 100).catch((e: RealtimeError) => e.code);
    vi.advanceTimersByTime(150);
    expect(await late).toBe('narration_timeout');
  });
});

describe('resume state', () => {
  it('round-trips through JSON storage and rejects anything else', () => {
    const state = createResumeState('s_1', 'rt_abc', 'text', 1234);
    expect(parseResumeState(JSON.parse(JSON.stringify(state)))).toEqual({ version: 1, sessionId: 's_1', resumeToken: 'rt_abc', savedAt: 1234, modality: 'text' });
    for (const bad of [null, 'rt_abc', {}, { ...state, version: 2 }, { ...state, sessionId: 'bad id' }, { ...state, resumeToken: '' }, { ...state, modality: 'video' }]) {
      expect(() => parseResumeState(bad)).toThrowError(expect.objectContaining({ code: 'resume_state_rejected' }));
    }
  });
});

describe('transport choice', () => {
  const SAFARI = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
  const IOS_CHROME = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0 Mobile/15E148 Safari/604.1';
  const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36';
  const EDGE = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36 Edg/124.0';
  const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

  it('falls back to the WebSocket on Safari and other WebKit-only browsers', () => {
    expect([SAFARI, IOS_CHROME].map(isWebKitOnly)).toEqual([true, true]);
    expect([CHROME, EDGE, FIREFOX].map(isWebKitOnly)).toEqual([false, false, false]);
    expect(effectiveTransport('webrtc', SAFARI, true)).toBe('ws');
    expect(effectiveTransport('webrtc', CHROME, true)).toBe('webrtc');
    expect(effectiveTransport('webrtc', CHROME, false)).toBe('ws');
    expect(effectiveTransport('ws', CHROME, true)).toBe('ws');
    expect(effectiveTransport(undefined, CHROME, true)).toBe('ws');
  });
});

describe('start frame', () => {
  const base = { sessionId: 's_1', apiKey: 'k', user: 'u-1', timezone: 'Europe/Paris', resumeToken: undefined, downlink: { encoding: 'pcm16' as const, sampleRate: 16000 }, userAgent: 'UA' };

  it('is valid against the server schema for voice, text, webrtc and resume', () => {
    const voice = buildStartFrame({ ...base, mode: effectiveMode({ voice: 'kal' }, 'ws'), transport: 'ws' });
    expect(StartFrame.safeParse(voice).success).toBe(true);
    expect(voice.audio).toEqual({ sr: 16000, output_encoding: 'pcm16', output_sr: 16000 });
    expect(voice.client).toEqual({ name: 'parley-client', version: '0.1.0', user: 'u-1', timezone: 'Europe/Paris', user_agent: 'UA' });
    const text = buildStartFrame({ ...base, mode: effectiveMode({ modality: 'text' }, 'ws'), transport: 'ws', resumeToken: 'rt_1' });
    expect(StartFrame.safeParse(text).success).toBe(true);
    expect(text.audio).toBeUndefined();
    expect(text.resume_token).toBe('rt_1');
    const rtc = buildStartFrame({ ...base, mode: effectiveMode({ background_audio: true }, 'webrtc'), transport: 'webrtc' });
    expect(StartFrame.safeParse(rtc).success).toBe(true);
    expect(rtc.transport).toEqual({ kind: 'webrtc' });
  });

  it('drops background_audio off WebRTC and applies connect options', () => {
    const mode = effectiveMode({ background_audio: true, temperature: 0.2 }, 'ws', { temperature: 0.9, noGreeting: true });
    expect(mode).toEqual({ kind: 'service', temperature: 0.9, greeting: false });
    expect(StartFrame.safeParse(buildStartFrame({ ...base, mode, transport: 'ws' })).success).toBe(true);
  });

  it('generates session ids the server accepts', () => {
    const ids = new Set(Array.from({ length: 50 }, generateSessionId));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^s_[0-9a-f]{24}$/);
  });
});

describe('EchoGuard', () => {
  it('silences frames quieter than the playback while it is audible, passes loud speech and later frames', () => {
    let now = 0;
    const guard = new EchoGuard(() => now);
    const loud = new Float32Array(320).fill(0.4);
    const echo = new Float32Array(320).fill(0.05);
    expect(guard.filter(echo)).toBe(echo); // nothing playing
    guard.notePlayback(new Float32Array(320).fill(0.3), 500);
    expect([...guard.filter(echo)].every((s) => s === 0)).toBe(true);
    expect(guard.filter(loud)).toBe(loud);
    now = 700; // past the playback and its tail
    expect(guard.filter(echo)).toBe(echo);
    guard.notePlayback(new Float32Array(320).fill(0.3), 500);
    guard.clear();
    expect(guard.filter(echo)).toBe(echo);
  });
});

describe('outbound frames', () => {
  it('every builder writes a frame the server schema accepts, with only the fields given', async () => {
    const { ClientFrame } = await import('../../session/protocol/client.ts');
    const { frames } = await import('./outbound-frames.ts');
    const built = [
      frames.inputText('hi'),
      frames.injectContext('m1', 'note', 'context', false),
      frames.injectContext('m2', 'hello', 'user', undefined),
      frames.setVoice('kal'),
      frames.reset(),
      frames.interrupt(),
      frames.wrapUp(),
      frames.wrapUp('done'),
      frames.toolResult('c1', undefined, {}),
      frames.toolResult('c1', { ok: 1 }, { outcome: 'succeeded', verified: true }),
      frames.toolDeferred('c1', 'h1'),
      frames.toolDeferred('c1', 'h1', 'Working'),
      frames.toolProgress('c1', 'half'),
      frames.toolPartialResult('c1', [1], {}),
      frames.toolPartialResult('c1', 'x', { reply: true, interaction: { prompt: 'Sure?', options: ['yes', 'no'] } }),
      frames.toolInteractionUpdate('c1', 'i1', 'resolved'),
      frames.toolInteractionUpdate('c1', 'i1', 'cancelled', 'user left'),
      frames.setToolChoice({ allowed: ['a', 'b'] }, true),
      frames.toolCancel('c1'),
      frames.ambience(false),
    ];
    for (const frame of built) expect(ClientFrame.safeParse(frame).success, JSON.stringify(frame)).toBe(true);
    expect(built[1]).toEqual({ type: 'inject_context', message_id: 'm1', text: 'note', role: 'context', reply: false });
    expect(built[2]).toEqual({ type: 'inject_context', message_id: 'm2', text: 'hello', role: 'user' });
    expect(built[6]).toEqual({ type: 'wrap_up' });
    expect(built[8]).toEqual({ type: 'tool_result', id: 'c1', content: null });
    expect(built[10]).toEqual({ type: 'tool_deferred', id: 'c1', handle: 'h1' });
    expect(built[17]).toEqual({ type: 'set_tool_choice', tool_choice: { allowed: ['a', 'b'] }, one_shot: true });
  });
});

describe('resume state import checks', () => {
  it('wants the same modality, and the same session id when the client has a fixed one', async () => {
    const { checkImport } = await import('./resume-state.ts');
    const state = createResumeState('s_9', 'rt_9', 'voice');
    expect(checkImport(state, { modality: 'voice', sessionId: undefined })).toEqual(state);
    expect(checkImport(state, { modality: 'voice', sessionId: 's_9' })).toEqual(state);
    expect(() => checkImport(state, { modality: 'text', sessionId: undefined })).toThrowError(expect.objectContaining({ code: 'resume_state_rejected' }));
    expect(() => checkImport(state, { modality: 'voice', sessionId: 's_other' })).toThrowError(expect.objectContaining({ code: 'resume_state_rejected' }));
  });
});
