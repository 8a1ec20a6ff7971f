import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAlive, expectStartRejected, sid, textStart, voiceStart, waitError, waitTurn } from '../testing/conversation.ts';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
import { startSession, WsTestClient } from '../testing/ws-test-client.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
});

/** A start frame (without `type`) that authenticates with the persistent key. */
const text = (mode: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ ...textStart(sid(), mode), api_key: t.key, ...extra });
const voice = (mode: Record<string, unknown> = {}, audio: Record<string, unknown> = { sr: 16000 }, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...voiceStart(sid(), mode, audio),
  api_key: t.key,
  ...extra,
});

describe('start frame strictness → invalid_start_frame, close 4400', () => {
  const cases: Array<[string, () => Record<string, unknown>]> = [
    ['an extra top-level field', () => text({}, { extra: 1 })],
    ['an extra mode field', () => text({ colour: 'blue' })],
    ['missing mode.kind', () => {
      const start = text();
      delete (start.mode as Record<string, unknown>).kind;
      return start;
    }],
    ['mode.kind other than service', () => text({ kind: 'parley' })],
    ['missing mode', () => ({ session_id: sid(), api_key: t.key })],
    ['mode not an object', () => ({ session_id: sid(), api_key: t.key, mode: 'service' })],
    ['missing session_id', () => ({ mode: { kind: 'service', modality: 'text' }, api_key: t.key })],
    ['session_id with a leading period', () => text({}, { session_id: '.abc' })],
    ['empty session_id', () => text({}, { session_id: '' })],
    ['session_id of 65 characters', () => text({}, { session_id: 'a'.repeat(65) })],
    ['session_id with a space', () => text({}, { session_id: 'a b' })],
    ['session_id not a string', () => text({}, { session_id: 7 })],
    ['unknown modality', () => text({ modality: 'video' })],
    ['voice modality without audio', () => ({ ...voice(), audio: undefined })],
    ['default (voice) modality without audio', () => ({ session_id: sid(), mode: { kind: 'service' }, api_key: t.key })],
    ['text modality with audio', () => text({}, { audio: { sr: 16000 } })],
    ['background_audio on the WebSocket transport (text)', () => text({ background_audio: true })],
    ['background_audio on the WebSocket transport (voice)', () => voice({ background_audio: true })],
    ['background_audio with transport kind websocket', () => voice({ background_audio: true }, { sr: 16000 }, { transport: { kind: 'websocket' } })],
    ['turn_end_threshold 0.01', () => voice({ turn_end_threshold: 0.01 })],
    ['turn_end_threshold 0.6', () => voice({ turn_end_threshold: 0.6 })],
    ['temperature as a string', () => text({ temperature: '0.5' })],
    ['greeting true', () => text({ greeting: true })],
    ['empty greeting string', () => text({ greeting: '' })],
    ['unsupported audio.sr 22050', () => voice({}, { sr: 22050 })],
    ['audio.sr as a string', () => voice({}, { sr: '16000' })],
    ['output_sr 96000', () => voice({}, { sr: 16000, output_sr: 96000 })],
    ['unknown output_encoding', () => voice({}, { sr: 16000, output_encoding: 'mp3' })],
    ['an extra audio field', () => voice({}, { sr: 16000, channels: 2 })],
    ['unknown mode.voice', () => text({ voice: 'no-such-voice' })],
    ['transport kind webrtc in a text session', () => text({}, { transport: { kind: 'webrtc' } })],
    ['unknown transport kind', () => text({}, { transport: { kind: 'carrier-pigeon' } })],
    ['an extra client field', () => text({}, { client: { name: 'x', shoe_size: 9 } })],
    ['api_key not a string', () => text({}, { api_key: 42 })],
    ['web_search not a boolean', () => text({ web_search: 'yes' })],
    ['tools not an array', () => text({ tools: {} })],
    ['tool_choice of an unknown form', () => text({ tool_choice: 'sometimes' })],
  ];
  it.each(cases)('%s', async (_label, build) => {
    const error = await expectStartRejected(t.wsUrl, build(), 'invalid_start_frame', 4400);
    expect(error.retryable).toBe(false);
  });

  it('a binary first frame', async () => {
    const client = await WsTestClient.open(t.wsUrl);
    client.sendBinary(new Uint8Array(640));
    const closed = await client.waitClose();
    expect(client.all('error').map((e) => [e.code, e.retryable])).toEqual([['invalid_start_frame', false]]);
    expect(closed.code).toBe(4400);
    client.assertProtocol();
  });

  it.each([
    ['malformed JSON', '{"type":"start",'],
    ['a JSON array', '[1,2]'],
    ['a JSON string', '"start"'],
    ['an object without type', JSON.stringify({ session_id: 'abc', mode: { kind: 'service', modality: 'text' } })],
    ['an unknown type', JSON.stringify({ type: 'hello' })],
    ['a non-start client frame', JSON.stringify({ type: 'input_text', text: 'hi' })],
    ['a reset frame', JSON.stringify({ type: 'reset' })],
  ])('a first frame that is %s', async (_label, raw) => {
    await expectStartRejected(t.wsUrl, raw, 'invalid_start_frame', 4400);
  });
});

describe('start frame tools → invalid_tools, close 4400', () => {
  const tool = (name: string, extra: Record<string, unknown> = {}) => ({ name, description: `the ${name} tool`, ...extra });
  const cases: Array<[string, Record<string, unknown>]> = [
    ['duplicate names', { tools: [tool('lookup'), tool('lookup')] }],
    ['a name with a space', { tools: [tool('look up')] }],
    ['an empty name', { tools: [tool('')] }],
    ['a name of 65 characters', { tools: [tool('a'.repeat(65))] }],
    ['parameters of type string', { tools: [tool('lookup', { parameters: { type: 'string' } })] }],
    ['an unknown declaration field', { tools: [tool('lookup', { color: 'red' })] }],
    ['a declaration that is not an object', { tools: ['lookup'] }],
    ['web_search declared while mode.web_search is true', { web_search: true, tools: [tool('web_search')] }],
    ['end_call declared while mode.end_call is true', { end_call: true, tools: [tool('end_call')] }],
    ['an always-managed name (think_deeply)', { tools: [tool('think_deeply')] }],
    ['a tool_choice naming an undeclared tool', { tools: [tool('lookup')], tool_choice: { tool: 'nope' } }],
  ];
  it.each(cases)('%s', async (_label, mode) => {
    const error = await expectStartRejected(t.wsUrl, text(mode), 'invalid_tools', 4400);
    expect(error.retryable).toBe(false);
  });

  it.each([
    ['end_call as a client tool while the feature is off', { tools: [tool('end_call')] }],
    ['end_call as a client tool with end_call false', { end_call: false, tools: [tool('end_call')] }],
    ['web_search as a client tool while the feature is off', { tools: [tool('web_search')] }],
    ['several valid tools with object parameters', {
      tools: [tool('a', { parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }), tool('b'), tool('c-d_e')],
    }],
  ])('accepts %s', async (_label, mode) => {
    const { client } = await startSession(t.wsUrl, text(mode));
    await expectAlive(client);
    client.close();
    client.assertProtocol();
  });
});

describe('valid start variants', () => {
  async function ready(start: Record<string, unknown>) {
    const { client, ready } = await startSession(t.wsUrl, start);
    return { client, ready };
  }

  it('text modality: ready has modality text and no audio field', async () => {
    const { client, ready: r } = await ready(text());
    expect(r.modality).toBe('text');
    expect('audio' in r).toBe(false);
    client.close();
    client.assertProtocol();
  });

  it('voice modality: ready.audio defaults to pcm16 at 16000', async () => {
    const { client, ready: r } = await ready(voice());
    expect(r.modality).toBe('voice');
    expect(r.audio).toEqual({ output_encoding: 'pcm16', output_sr: 16000 });
    client.close();
    client.assertProtocol();
  });

  it('voice modality is the default when mode.modality is omitted', async () => {
    const { client, ready: r } = await ready({ session_id: sid(), mode: { kind: 'service' }, audio: { sr: 16000 }, api_key: t.key });
    expect(r.modality).toBe('voice');
    expect(r.audio).toEqual({ output_encoding: 'pcm16', output_sr: 16000 });
    client.close();
    client.assertProtocol();
  });

  it('output_encoding pcm_f32le and output_sr are echoed in ready.audio', async () => {
    const { client, ready: r } = await ready(voice({}, { sr: 16000, output_encoding: 'pcm_f32le', output_sr: 24000 }));
    expect(r.audio).toEqual({ output_encoding: 'pcm_f32le', output_sr: 24000 });
    client.close();
    client.assertProtocol();
  });

  it.each([8000, 16000, 24000, 44100, 48000])('accepts audio.sr %i', async (sr) => {
    const { client, ready: r } = await ready(voice({}, { sr }));
    expect(r.audio).toEqual({ output_encoding: 'pcm16', output_sr: 16000 });
    client.close();
    client.assertProtocol();
  });

  it('greeting false: no turn before the first input', async () => {
    const { client } = await ready(text({ greeting: false }));
    const reply = await expectAliveTurns(client);
    expect(client.all('turn').map((f) => f.turn_id)).toEqual([reply]);
    client.close();
    client.assertProtocol();
  });

  it('a custom greeting string is the welcome turn text', async () => {
    const greeting = 'Welcome to the custom greeting test.';
    const { client } = await ready(text({ greeting }));
    const turn = await client.waitFor('turn', (f) => f.welcome === true);
    const welcome = await waitTurn(client, turn.turn_id);
    expect(welcome.utterance?.text).toBe(greeting);
    expect(welcome.deltas).toBe(greeting);
    expect(welcome.done.status).toBe('completed');
    client.close();
    client.assertProtocol();
  });

  it('accepts explicit optional fields: client info, ws transport, temperature, threshold, tool_choice', async () => {
    const { client, ready: r } = await ready(
      voice(
        { voice: 'rms', instructions: 'Be brief.', temperature: 0.2, turn_end_threshold: 0.05, tool_choice: 'none', flow: false, web_search: false, end_call: false },
        { sr: 48000 },
        { client: { name: 'tests', version: '1.0.0' }, transport: { kind: 'websocket' } },
      ),
    );
    expect(r.voice).toBe('rms');
    client.close();
    client.assertProtocol();
  });

  it('accepts turn_end_threshold at both bounds', async () => {
    for (const threshold of [0.05, 0.5]) {
      const { client } = await ready(voice({ turn_end_threshold: threshold }));
      client.close();
      client.assertProtocol();
    }
  });
});

/** Sends one input and returns its turn id, asserting a complete reply. */
async function expectAliveTurns(client: WsTestClient): Promise<string> {
  const after = client.frames.length;
  await expectAlive(client, 'hello');
  const asr = client.frames.slice(after).find((f) => f.type === 'asr');
  return (asr as { turn_id: string }).turn_id;
}

describe('ready frame', () => {
  it('has the required fields, the voice catalogue and a resume token', async () => {
    const { client, ready } = await startSession(t.wsUrl, text());
    expect(ready).toMatchObject({ type: 'ready', modality: 'text', voice: 'kal16', name: 'Kal 16k' });
    expect(typeof ready.resume_token).toBe('string');
    expect(ready.resume_token.length).toBeGreaterThanOrEqual(16);
    expect(ready.voices.length).toBeGreaterThan(0);
    for (const entry of ready.voices) {
      expect(Object.keys(entry).sort()).toEqual(['gender', 'language', 'name', 'voice']);
    }
    expect(new Set(ready.voices.map((v) => v.voice)).size).toBe(ready.voices.length);
    expect(ready.voices.find((v) => v.voice === ready.voice)?.name).toBe(ready.name);
    client.close();
    client.assertProtocol();
  });

  it('name is the chosen voice name', async () => {
    const first = await startSession(t.wsUrl, text());
    first.client.close();
    expect(first.ready.voices.length).toBeGreaterThan(1);
    for (const entry of first.ready.voices) {
      const { client, ready } = await startSession(t.wsUrl, text({ voice: entry.voice }));
      expect([ready.voice, ready.name]).toEqual([entry.voice, entry.name]);
      client.close();
      client.assertProtocol();
    }
  });

  it('issues a different resume token to every session', async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 3; i += 1) {
      const { client, ready } = await startSession(t.wsUrl, text());
      tokens.add(ready.resume_token);
      client.close();
    }
    expect(tokens.size).toBe(3);
  });
});

describe('resume_token', () => {
  it('an unknown token → resume_failed (retryable false); the same socket can then start fresh', async () => {
    const client = await WsTestClient.open(t.wsUrl);
    const sessionId = sid();
    client.send({ type: 'start', ...textStart(sessionId), api_key: t.key, resume_token: 'rt_unknown_token_value' });
    const error = await waitError(client, 'resume_failed');
    expect(error.retryable).toBe(false);
    expect(client.all('ready')).toHaveLength(0);
    expect(client.closed).toBeUndefined();

    client.send({ type: 'start', ...textStart(sessionId), api_key: t.key });
    const ready = await client.waitFor('ready');
    expect(ready.resume_token).not.toBe('rt_unknown_token_value');
    await expectAlive(client);
    expect(client.all('error').map((e) => e.code)).toEqual(['resume_failed']);
    client.close();
    client.assertProtocol();
  });
});
