import WebSocket from 'ws';
import { concat, loadFixture, roomTone } from '../../../media/testing/audio-stream.ts';
import { int16ToBytes } from '../../../media/pcm.ts';
import { startFakeOpenAiServer, type FakeReply } from '../../../session/testing/fake-openai-server.ts';
import { startFakeOpenAiSpeechServer, tone, toneReply, type SpeechReply, type TranscriptionReply } from '../../../session/testing/fake-openai-speech-server.ts';
import { FuzzServer } from './fuzz-server.ts';
import { Canary } from './canary.ts';
import { Inbox, type Frame } from './inbox.ts';
import type { Rng } from '../../../session/testing/rng.ts';

/** Timeouts the faulty providers run under (small, so a stall costs little). */
export const FAULT_TIMEOUTS = { first: 600, idle: 400 };
const KEY = 'sk-fuzz-4f9Qx7LmT2vR8sKp3Zb6Nw1Yc5';
const SECRET_BODY = '<html>upstream http://internal-gw.corp.example:9000/v1 failed for key sk-fuzz-4f9Qx7LmT2vR8sKp3Zb6Nw1Yc5</html>';
const sse = (content: string): string => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const FINISH = `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`;

/** How a fault must end its turn: failed with this code, completed, or either (but ended, leak-free). */
type Expect = { fails: 'model_error' | 'asr_error' | 'tts_error' } | 'completes' | 'ends';

/** Every LLM stream fault: status errors, bad SSE, a stall at each point of a stream, slow bytes, early EOF. */
export const LLM_FAULTS: Record<string, { reply: () => FakeReply; expect: Expect }> = {
  'status-500': { reply: () => ({ status: 500, error: 'boom at http://internal-gw.corp.example:9000' }), expect: { fails: 'model_error' } },
  'status-429': { reply: () => ({ status: 429, error: 'slow down' }), expect: { fails: 'model_error' } },
  'html-502': { reply: () => ({ status: 502, body: SECRET_BODY, contentType: 'text/html' }), expect: { fails: 'model_error' } },
  'bad-sse-json': { reply: () => ({ raw: [sse('Hel'), 'data: {not json at all\n\n', sse('lo')] }), expect: 'ends' },
  'bad-sse-garbage': { reply: () => ({ raw: ['\u0000\u0001garbage\n', 'event: ???\n\n', 'data: [DONE]\n\n'] }), expect: 'ends' },
  'stall-before-headers': { reply: () => ({ hang: true, beforeHeaders: true }), expect: { fails: 'model_error' } },
  'stall-after-headers': { reply: () => ({ raw: [], then: 'stall' }), expect: { fails: 'model_error' } },
  'stall-mid-event': { reply: () => ({ raw: [sse('abc').slice(0, 11)], then: 'stall' }), expect: { fails: 'model_error' } },
  'stall-mid-text': { reply: () => ({ stallAfterText: 'Half an ans' }), expect: { fails: 'model_error' } },
  'stall-before-done': { reply: () => ({ raw: [sse('All of it.'), FINISH], then: 'stall' }), expect: 'ends' },
  'slow-bytes': { reply: () => ({ raw: [...`${sse('Slow but sure.')}data: [DONE]\n\n`], gapMs: 3 }), expect: 'completes' },
  'early-eof': { reply: () => ({ failAfterText: 'Cut off mid' }), expect: { fails: 'model_error' } },
  'early-eof-in-event': { reply: () => ({ raw: [sse('ab').slice(0, 14)], then: 'destroy' }), expect: { fails: 'model_error' } },
  'error-event': { reply: () => ({ raw: [sse('Part'), `data: ${JSON.stringify({ error: { message: `quota exceeded for ${KEY}` } })}\n\n`] }), expect: 'ends' },
};

/** Speech-to-text faults: the uploaded utterance meets a failing recogniser. */
export const ASR_FAULTS: Record<string, { reply: () => TranscriptionReply; expect: Expect }> = {
  'status-500': { reply: () => ({ status: 500, error: 'recogniser down at http://internal-gw.corp.example:9000' }), expect: { fails: 'asr_error' } },
  'status-429': { reply: () => ({ status: 429, error: 'slow down' }), expect: { fails: 'asr_error' } },
  'bad-json': { reply: () => ({ status: 200, body: '{"text": "unterminated', contentType: 'application/json' }), expect: { fails: 'asr_error' } },
  'html-502': { reply: () => ({ status: 502, body: SECRET_BODY, contentType: 'text/html' }), expect: { fails: 'asr_error' } },
  'stall-before-headers': { reply: () => ({ hang: true }), expect: { fails: 'asr_error' } },
  'stall-after-headers': { reply: () => ({ hang: true, afterHeaders: true }), expect: { fails: 'asr_error' } },
  'slow-answer': { reply: () => ({ text: 'what is 12 times 7', delayMs: FAULT_TIMEOUTS.first * 3 }), expect: { fails: 'asr_error' } },
  healthy: { reply: () => 'what is 12 times 7', expect: 'completes' },
};

/** Text-to-speech faults, mid-reply. */
export const TTS_FAULTS: Record<string, { reply: () => SpeechReply; expect: Expect }> = {
  'status-500': { reply: () => ({ status: 500, error: 'voice down at http://internal-gw.corp.example:9000' }), expect: { fails: 'tts_error' } },
  'status-429': { reply: () => ({ status: 429, error: 'slow down' }), expect: { fails: 'tts_error' } },
  'stall-before-headers': { reply: () => ({ hang: true }), expect: { fails: 'tts_error' } },
  'stall-mid-audio': { reply: () => ({ pcm: tone(2000), stopAfterBytes: 9600, then: 'stall' }), expect: { fails: 'tts_error' } },
  'early-eof': { reply: () => ({ pcm: tone(2000), stopAfterBytes: 9601, then: 'destroy' }), expect: { fails: 'tts_error' } },
  'slow-bytes': { reply: () => ({ pcm: tone(600), chunkBytes: [480], delayMs: 30 }), expect: 'completes' },
};

export interface FaultReport {
  turns: number;
  /** `<provider>:<fault>` → how often it was driven. */
  byFault: Map<string, number>;
  crashes: number;
  crashDetail: string;
  /** A turn not closed by done within its bound (or an utterance not answered at all). */
  hungTurns: string[];
  /** A fault that did not end as it must (wrong code, completed where it must fail...). */
  wrongOutcomes: string[];
  /** An error detail quoting the provider: its URL, body, host or key. */
  leaks: string[];
  sessionsHarmed: number;
  harmDetail: string[];
}


/**
 * Provider faults end to end: the server (a process of its own) talks to fake OpenAI-compatible
 * model and speech servers that fail in every way listed above, `rounds` times each in a seeded
 * order, while canaries (a text session on the model, a voice session on model and speech)
 * converse beside them. Each faulted turn must end (done, or no turn for a lost utterance) within
 * its timeouts, with our error code and our words.
 */
export async function runProviderFaults(rng: Rng, rounds: number): Promise<FaultReport> {
  const report: FaultReport = { turns: 0, byFault: new Map(), crashes: 0, crashDetail: '', hungTurns: [], wrongOutcomes: [], leaks: [], sessionsHarmed: 0, harmDetail: [] };
  const llm = await startFakeOpenAiServer();
  const speech = await startFakeOpenAiSpeechServer();
  let asrFault: string | undefined;
  llm.script((body: { messages: { role: string; content: string }[] }) => {
    const last = [...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const fault = /^llm-fault (\S+)/.exec(last)?.[1];
    if (fault && LLM_FAULTS[fault]) return LLM_FAULTS[fault].reply();
    const tts = /^tts-fault (\S+)/.exec(last)?.[1];
    return { text: tts ? `Speaking ${tts} now.` : 'The answer is 84.' };
  });
  speech.scriptTranscription(() => (asrFault && ASR_FAULTS[asrFault] ? ASR_FAULTS[asrFault]!.reply() : 'what is 12 times 7'));
  speech.scriptSpeech((request) => {
    const fault = /Speaking (\S+) now/.exec(request.input)?.[1];
    return fault && TTS_FAULTS[fault] ? TTS_FAULTS[fault].reply() : toneReply(request.input.slice(0, 30));
  });
  const server = await FuzzServer.start({
    LLM_PROVIDER: 'openai', LLM_BASE_URL: llm.url, LLM_API_KEY: KEY,
    LLM_TIMEOUT_MS: String(FAULT_TIMEOUTS.first), LLM_IDLE_TIMEOUT_MS: String(FAULT_TIMEOUTS.idle),
    ASR_PROVIDER: 'openai', ASR_BASE_URL: speech.url, ASR_API_KEY: KEY, ASR_TIMEOUT_MS: String(FAULT_TIMEOUTS.first),
    TTS_PROVIDER: 'openai', TTS_BASE_URL: speech.url, TTS_API_KEY: KEY,
    TTS_TIMEOUT_MS: String(FAULT_TIMEOUTS.first), TTS_IDLE_TIMEOUT_MS: String(FAULT_TIMEOUTS.idle),
  });
  const secrets = [KEY, 'internal-gw', new URL(llm.url).host, new URL(speech.url).host, '<html'];
  const canaries = [new Canary(server.wsUrl, server.key, 'text', 'fault-canary-text', 15_000), new Canary(server.wsUrl, server.key, 'voice', 'fault-canary-voice', 15_000)];
  const text = new FaultSession(server.wsUrl, server.key, 'text', 'fault-text');
  const voice = new FaultSession(server.wsUrl, server.key, 'voice', 'fault-voice');
  try {
    await Promise.all([...canaries.map((c) => c.open()), text.open(), voice.open()]);
    const canaryRuns = canaries.map((c) => c.run());
    const plan: Array<['llm' | 'asr' | 'tts', string]> = [];
    for (let r = 0; r < rounds; r += 1) {
      for (const name of Object.keys(LLM_FAULTS)) plan.push(['llm', name]);
      for (const name of Object.keys(ASR_FAULTS)) plan.push(['asr', name]);
      for (const name of Object.keys(TTS_FAULTS)) plan.push(['tts', name]);
    }
    for (let i = plan.length - 1; i > 0; i -= 1) {
      const j = rng.int(i + 1);
      [plan[i], plan[j]] = [plan[j]!, plan[i]!];
    }
    // Model faults run on the text session alongside the speech faults on the voice session.
    const llmPlan = plan.filter(([p]) => p === 'llm');
    const speechPlan = plan.filter(([p]) => p !== 'llm');
    const record = (provider: string, fault: string, outcome: Outcome, expect: Expect): void => {
      const label = `${provider}:${fault}`;
      report.turns += 1;
      report.byFault.set(label, (report.byFault.get(label) ?? 0) + 1);
      if (outcome.hung) return void report.hungTurns.push(label);
      for (const e of outcome.errors) if (secrets.some((s) => String(e.detail).includes(s))) report.leaks.push(`${label}: ${String(e.detail)}`);
      const codes = outcome.errors.map((e) => e.code);
      if (expect === 'completes' && outcome.status !== 'completed') report.wrongOutcomes.push(`${label}: ${outcome.status} ${codes.join(',')}`);
      if (typeof expect === 'object' && !(codes.includes(expect.fails) && outcome.status !== 'completed')) report.wrongOutcomes.push(`${label}: ${outcome.status} ${codes.join(',')}`);
    };
    await Promise.all([
      (async () => {
        for (const [, fault] of llmPlan) record('llm', fault, await text.typed(`llm-fault ${fault}`), LLM_FAULTS[fault]!.expect);
      })(),
      (async () => {
        for (const [provider, fault] of speechPlan) {
          if (provider === 'asr') {
            asrFault = fault;
            record('asr', fault, await voice.spoken(), ASR_FAULTS[fault]!.expect);
            asrFault = undefined;
          } else record('tts', fault, await voice.injected(`tts-fault ${fault}`), TTS_FAULTS[fault]!.expect);
        }
      })(),
    ]);
    const harm = await Promise.all(canaries.map((c) => c.stop()));
    await Promise.all(canaryRuns);
    report.sessionsHarmed = harm.filter((h) => h.harm.length > 0).length;
    report.harmDetail = harm.flatMap((h, i) => h.harm.map((line) => `canary ${i}: ${line}`));
    if (server.exit) report.crashDetail = `the server exited (${server.exit.code ?? server.exit.signal}): ${server.stderrTail()}`;
    report.crashes = report.crashDetail ? 1 : 0;
    return report;
  } finally {
    text.close();
    voice.close();
    await Promise.all(canaries.map((c) => c.stop()));
    await server.stop();
    await llm.close();
    await speech.close();
  }
}

interface Outcome {
  hung: boolean;
  status: string | undefined;
  errors: Frame[];
}

/** Longest a faulted turn may take: the first-byte timeout, an idle timeout, retries and slack. */
const TURN_BOUND_MS = FAULT_TIMEOUTS.first * 2 + FAULT_TIMEOUTS.idle * 2 + 4000;

/** A session the faults are driven through, one turn at a time. */
class FaultSession {
  private ws: WebSocket | undefined;
  private readonly inbox = new Inbox(() => this.ws?.readyState === WebSocket.OPEN);
  private n = 0;

  constructor(
    private readonly wsUrl: string,
    private readonly key: string,
    private readonly modality: 'text' | 'voice',
    private readonly sessionId: string,
  ) {}

  async open(): Promise<void> {
    const ws = new WebSocket(this.wsUrl, { perMessageDeflate: false });
    this.ws = ws;
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.inbox.push(JSON.parse(String(data)) as Frame);
    });
    ws.on('close', () => this.inbox.notify());
    await new Promise<void>((ok, fail) => {
      ws.once('open', () => ok());
      ws.once('error', fail);
    });
    ws.send(JSON.stringify({ type: 'start', session_id: this.sessionId, api_key: this.key, mode: { kind: 'service', modality: this.modality, greeting: false }, ...(this.modality === 'voice' ? { audio: { sr: 16000 } } : {}) }));
    await this.inbox.waitFor((f) => f.type === 'ready', 0, 10_000);
  }

  close(): void {
    this.ws?.terminate();
  }

  typed(text: string): Promise<Outcome> {
    return this.turn(() => this.ws!.send(JSON.stringify({ type: 'input_text', text })));
  }

  injected(text: string): Promise<Outcome> {
    this.n += 1;
    return this.turn(() => this.ws!.send(JSON.stringify({ type: 'inject_context', message_id: `f${this.n}`, text, role: 'user' })));
  }

  /**
   * An utterance, sent faster than real time (the endpointer counts samples, not wall time):
   * either it is recognised and answered (asr, turn … done), or it is lost with asr_error.
   */
  async spoken(): Promise<Outcome> {
    const after = this.inbox.frames.length;
    const audio = int16ToBytes(concat(roomTone(300), loadFixture('twelve.wav'), roomTone(1500)));
    for (let i = 0; i < audio.length; i += 640) this.ws!.send(audio.subarray(i, i + 640), { binary: true });
    const first = await this.inbox.waitFor((f) => f.type === 'asr' || (f.type === 'error' && f.code === 'asr_error'), after, TURN_BOUND_MS);
    if (!first) return { hung: true, status: undefined, errors: [] };
    if (first.type === 'error') return { hung: false, status: 'lost', errors: this.errorsSince(after) };
    const done = await this.inbox.waitFor((f) => f.type === 'done' && f.turn_id === first.turn_id, after, TURN_BOUND_MS);
    return { hung: !done, status: done?.status as string | undefined, errors: this.errorsSince(after) };
  }

  private async turn(send: () => void): Promise<Outcome> {
    const after = this.inbox.frames.length;
    send();
    const turn = await this.inbox.waitFor((f) => f.type === 'turn', after, TURN_BOUND_MS);
    if (!turn) return { hung: true, status: undefined, errors: this.errorsSince(after) };
    const done = await this.inbox.waitFor((f) => f.type === 'done' && f.turn_id === turn.turn_id, after, TURN_BOUND_MS);
    // Let frames that follow done (none should) arrive before the next turn starts.
    return { hung: !done, status: done?.status as string | undefined, errors: this.errorsSince(after) };
  }

  private errorsSince(after: number): Frame[] {
    return this.inbox.frames.slice(after).filter((f) => f.type === 'error');
  }
}
