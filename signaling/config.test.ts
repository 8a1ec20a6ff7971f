import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { interactionTiming } from '../session/tools/interactions/timing.ts';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

function rejection(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('defaults: PORT 8080, HOST 127.0.0.1, and the documented limits', () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(8080);
    expect(config.HOST).toBe('127.0.0.1');
    expect(config.SCOPED_KEY_TTL_S).toBe(7800);
    expect(config.LLM_PROVIDER).toBe('local');
    expect(config.MAX_SESSIONS).toBeGreaterThan(0);
    expect(config.MAX_FRAME_BYTES).toBeGreaterThan(0);
    expect(config.RESUME_TTL_S).toBe(150);
    expect(config.TRUST_PROXY).toBe(false);
    expect(config.DEV_ROUTES).toBe('off');
  });

  it('usage: prices default to one unit a session second, notices and warnings on, every limit off', () => {
    const config = loadConfig({});
    expect(config.PRICES).toEqual({ session_s: 1 });
    expect(config.CLOSING_NOTICE_S).toBe(60);
    expect(config.LOW_CREDIT_WARNING_S).toBe(300);
    expect(config.LLM_STREAM_USAGE).toBe(true);
    for (const name of ['MAX_SESSION_S', 'IDLE_TIMEOUT_S', 'MAX_SESSIONS_PER_ACCOUNT', 'SESSION_STARTS_PER_MINUTE', 'KEY_EXCHANGES_PER_MINUTE', 'INPUT_TEXT_PER_SECOND'] as const) {
      expect(config[name]).toBeUndefined();
      expect(loadConfig({ [name]: '7' })[name]).toBe(7);
      expect(rejection({ [name]: '0' }).message).toContain(name);
    }
  });

  it('PRICES: a JSON object of known meters to non-negative numbers, or a message naming it', () => {
    expect(loadConfig({ PRICES: '{"session_s":0.5,"llm_output_tokens":0.002}' }).PRICES).toEqual({ session_s: 0.5, llm_output_tokens: 0.002 });
    expect(loadConfig({ PRICES: '{}' }).PRICES).toEqual({});
    expect(rejection({ PRICES: 'session_s=1' }).message).toMatch(/PRICES: must be a JSON object/);
    expect(rejection({ PRICES: '{"minutes":1}' }).message).toMatch(/PRICES.*meters/);
    expect(rejection({ PRICES: '{"session_s":-1}' }).message).toContain('PRICES');
    expect(rejection({ PRICES: '[1]' }).message).toContain('PRICES');
  });

  it('WEBRTC_MEDIA_WORKERS: one per core beyond the first (1 to 4) by default, 0 allowed, negatives refused', () => {
    const cores = availableParallelism();
    expect(loadConfig({}).WEBRTC_MEDIA_WORKERS).toBe(Math.min(4, Math.max(1, cores - 1)));
    expect(loadConfig({ WEBRTC_MEDIA_WORKERS: '0' }).WEBRTC_MEDIA_WORKERS).toBe(0);
    expect(loadConfig({ WEBRTC_MEDIA_WORKERS: '3' }).WEBRTC_MEDIA_WORKERS).toBe(3);
    expect(rejection({ WEBRTC_MEDIA_WORKERS: '-1' }).message).toContain('WEBRTC_MEDIA_WORKERS');
    expect(rejection({ WEBRTC_MEDIA_WORKERS: 'many' }).message).toContain('WEBRTC_MEDIA_WORKERS');
  });

  it('WEBRTC_WARM_WORKERS: on by default with a 30 s bound; 0 and other bounds accepted, bad values refused', () => {
    expect(loadConfig({})).toMatchObject({ WEBRTC_WARM_WORKERS: true, WEBRTC_WARM_CALL: false, WEBRTC_WORKER_START_TIMEOUT_MS: 30000 });
    expect(loadConfig({ WEBRTC_WARM_CALL: '1' })).toMatchObject({ WEBRTC_WARM_CALL: true });
    expect(rejection({ WEBRTC_WARM_CALL: 'maybe' }).message).toContain('WEBRTC_WARM_CALL');
    expect(loadConfig({ WEBRTC_WARM_WORKERS: '0', WEBRTC_WORKER_START_TIMEOUT_MS: '5000' })).toMatchObject({ WEBRTC_WARM_WORKERS: false, WEBRTC_WORKER_START_TIMEOUT_MS: 5000 });
    expect(rejection({ WEBRTC_WARM_WORKERS: 'yes' }).message).toContain('WEBRTC_WARM_WORKERS');
    expect(rejection({ WEBRTC_WORKER_START_TIMEOUT_MS: '0' }).message).toContain('WEBRTC_WORKER_START_TIMEOUT_MS');
  });

  it('turn-taking: Silero by default, speech_or_words confirmation, lists lower-cased and de-duplicated, bad values refused', () => {
    const config = loadConfig({});
    expect(config.VAD_PROVIDER).toBe('silero');
    expect(config.BARGE_IN_CONFIRM).toBe('speech_or_words');
    expect(config.BARGE_IN_SPEECH_MS).toBe(700);
    expect(config.BARGE_IN_MAX_PAUSE_MS).toBe(1400);
    expect(config.BACKCHANNELS).toContain('mm-hm');
    expect(loadConfig({ BACKCHANNELS: 'Yeah, OK ,yeah,,i see' }).BACKCHANNELS).toEqual(['yeah', 'ok', 'i see']);
    expect(loadConfig({ VAD_PROVIDER: 'webrtc', BARGE_IN_CONFIRM: 'immediate' })).toMatchObject({ VAD_PROVIDER: 'webrtc', BARGE_IN_CONFIRM: 'immediate' });
    expect(rejection({ VAD_PROVIDER: 'cobra' }).message).toContain('VAD_PROVIDER');
    expect(rejection({ BARGE_IN_CONFIRM: 'always' }).message).toContain('BARGE_IN_CONFIRM');
    expect(rejection({ BARGE_IN_SPEECH_MS: '50' }).message).toContain('BARGE_IN_SPEECH_MS');
  });

  it('SILERO_QUIET_GATE: off by default (it changes some decisions), 1/true turn it on, anything else refused', () => {
    expect(loadConfig({}).SILERO_QUIET_GATE).toBe(false);
    expect(loadConfig({ SILERO_QUIET_GATE: '1' }).SILERO_QUIET_GATE).toBe(true);
    expect(loadConfig({ SILERO_QUIET_GATE: 'true' }).SILERO_QUIET_GATE).toBe(true);
    expect(loadConfig({ SILERO_QUIET_GATE: '0' }).SILERO_QUIET_GATE).toBe(false);
    expect(rejection({ SILERO_QUIET_GATE: 'on' }).message).toContain('SILERO_QUIET_GATE');
  });

  it('WEBRTC_MEDIA_WORKER_NICE: −10 by default, −20 … 19 accepted, anything else refused', () => {
    expect(loadConfig({}).WEBRTC_MEDIA_WORKER_NICE).toBe(-10);
    expect(loadConfig({ WEBRTC_MEDIA_WORKER_NICE: '0' }).WEBRTC_MEDIA_WORKER_NICE).toBe(0);
    expect(loadConfig({ WEBRTC_MEDIA_WORKER_NICE: '-20' }).WEBRTC_MEDIA_WORKER_NICE).toBe(-20);
    expect(rejection({ WEBRTC_MEDIA_WORKER_NICE: '20' }).message).toContain('WEBRTC_MEDIA_WORKER_NICE');
    expect(rejection({ WEBRTC_MEDIA_WORKER_NICE: 'high' }).message).toContain('WEBRTC_MEDIA_WORKER_NICE');
  });

  it('observability: tracing and the metrics token off by default; collector headers parsed; bad values refused', () => {
    const config = loadConfig({});
    expect(config.METRICS_TOKEN).toBeUndefined();
    expect(config.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(config).toMatchObject({ OTEL_EXPORTER_OTLP_HEADERS: {}, OTEL_SERVICE_NAME: 'parley', READYZ_TIMEOUT_MS: 1000 });
    const set = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_HEADERS: 'api-key=abc%3D1, x-team = voice', METRICS_TOKEN: 'a'.repeat(16) });
    expect(set.OTEL_EXPORTER_OTLP_HEADERS).toEqual({ 'api-key': 'abc=1', 'x-team': 'voice' });
    expect(rejection({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }).message).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(rejection({ OTEL_EXPORTER_OTLP_HEADERS: 'no-value' }).message).toContain('OTEL_EXPORTER_OTLP_HEADERS');
    expect(rejection({ METRICS_TOKEN: 'short' }).message).toContain('METRICS_TOKEN');
    expect(rejection({ READYZ_TIMEOUT_MS: '0' }).message).toContain('READYZ_TIMEOUT_MS');
  });

  it('DATABASE_URL and REDIS_URL: unset by default (SQLite and memory); only their own schemes accepted', () => {
    const config = loadConfig({});
    expect([config.DATABASE_URL, config.REDIS_URL, config.REDIS_KEY_PREFIX, config.SESSION_LEASE_MS]).toEqual([undefined, undefined, 'parley:', 15_000]);
    const shared = loadConfig({ DATABASE_URL: 'postgresql://u:p@db:5432/parley', REDIS_URL: 'rediss://cache:6380/2', REDIS_KEY_PREFIX: 'prod:' });
    expect([shared.DATABASE_URL, shared.REDIS_URL, shared.REDIS_KEY_PREFIX]).toEqual(['postgresql://u:p@db:5432/parley', 'rediss://cache:6380/2', 'prod:']);
    expect(rejection({ DATABASE_URL: 'mysql://db/parley' }).message).toMatch(/DATABASE_URL: must be a postgres/);
    expect(rejection({ REDIS_URL: 'http://cache' }).message).toMatch(/REDIS_URL: must be a redis/);
    expect(rejection({ SESSION_LEASE_MS: '10' }).message).toContain('SESSION_LEASE_MS');
  });

  it('treats empty variables as unset', () => {
    const config = loadConfig({ PORT: '', HOST: '', MAX_SESSIONS: '' });
    expect(config.PORT).toBe(8080);
    expect(config.HOST).toBe('127.0.0.1');
  });

  it('reads and coerces the values it is given', () => {
    const config = loadConfig({ PORT: '9090', HOST: '0.0.0.0', MAX_SESSIONS: '3', TRUST_PROXY: 'true', DEFAULT_TEMPERATURE: '0.2' });
    expect(config).toMatchObject({ PORT: 9090, HOST: '0.0.0.0', MAX_SESSIONS: 3, TRUST_PROXY: true, DEFAULT_TEMPERATURE: 0.2 });
  });

  it('ignores variables it does not know', () => {
    expect(() => loadConfig({ PATH: '/bin', SOMETHING_ELSE: 'x' })).not.toThrow();
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '80.5'],
    ['MAX_SESSIONS', '0'],
    ['MAX_SESSIONS', '-1'],
    ['MAX_FRAME_BYTES', 'lots'],
    ['START_TIMEOUT_MS', '0'],
    ['LOG_LEVEL', 'chatty'],
    ['LLM_PROVIDER', 'magic'],
    ['LLM_BASE_URL', 'not a url'],
    ['TRUST_PROXY', 'yes'],
    ['DEFAULT_TEMPERATURE', '3'],
    ['SCOPED_KEY_SECRET', 'too-short'],
  ])('rejects %s=%s, naming the variable', (name, value) => {
    const error = rejection({ [name]: value });
    expect(error.message).toContain(name);
  });

  it('rejects LLM_PROVIDER=openai without LLM_BASE_URL, naming LLM_BASE_URL', () => {
    const error = rejection({ LLM_PROVIDER: 'openai' });
    expect(error.message).toContain('LLM_BASE_URL');
    expect(loadConfig({ LLM_PROVIDER: 'openai', LLM_BASE_URL: 'http://127.0.0.1:1234/v1' }).LLM_BASE_URL).toBe('http://127.0.0.1:1234/v1');
  });

  it('ALLOWED_ORIGINS: unset means any origin; a list is normalised (case, trailing slash); a non-origin is refused', () => {
    expect(loadConfig({}).ALLOWED_ORIGINS).toBeUndefined();
    expect([...loadConfig({ ALLOWED_ORIGINS: 'https://App.example.org/, http://localhost:3000' }).ALLOWED_ORIGINS!]).toEqual(['https://app.example.org', 'http://localhost:3000']);
    expect(rejection({ ALLOWED_ORIGINS: 'app.example.org' }).message).toContain('ALLOWED_ORIGINS');
    expect(rejection({ ALLOWED_ORIGINS: 'https://a.example/path' }).message).toContain('ALLOWED_ORIGINS');
  });

  it('hardening limits: documented defaults, bad values refused', () => {
    const config = loadConfig({});
    expect(config.HISTORY_MAX_CHARS).toBe(100_000);
    expect(config.AUTH_FAILURES_PER_ADDRESS).toBe(20);
    expect(config.AUTH_FAILURE_WINDOW_S).toBe(60);
    expect(config.RESUME_FAILURES_PER_CONNECTION).toBe(5);
    expect(config.REPORTS_MAX_BYTES).toBe(10 * 1024 * 1024);
    for (const name of ['HISTORY_MAX_CHARS', 'AUTH_FAILURES_PER_ADDRESS', 'AUTH_FAILURE_WINDOW_S', 'RESUME_FAILURES_PER_CONNECTION', 'REPORTS_MAX_BYTES']) {
      expect(rejection({ [name]: '0' }).message).toContain(name);
    }
    expect(rejection({ HISTORY_MAX_CHARS: '100' }).message).toContain('HISTORY_MAX_CHARS');
  });

  it('names every bad variable at once', () => {
    const error = rejection({ PORT: 'abc', MAX_SESSIONS: '0' });
    expect(error.message).toContain('PORT');
    expect(error.message).toContain('MAX_SESSIONS');
  });
});

describe('npm start with a bad configuration', () => {
  it('exits with status 2 and names the variable on stderr, without starting', () => {
    const root = fileURLToPath(new URL('../', import.meta.url));
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-config-'));
    try {
      const result = spawnSync(process.execPath, [join(root, 'node_modules/tsx/dist/cli.mjs'), join(root, 'signaling/main.ts')], {
        cwd: root,
        env: { ...process.env, PORT: 'abc', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(result.status).toBe(2);
      expect(result.stderr).toContain('PORT');
      expect(result.stdout).not.toContain('listening');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** INTERACTION_QUEUE_DEADLINE_S (default 10, fractions allowed) and INTERACTION_QUEUE_DEADLINE_ROUNDS (default 3). */
describe('interaction queue settings', () => {
  it('defaults: a 10 s watchdog, 3 rounds', () => {
    const config = loadConfig({});
    expect(config.INTERACTION_QUEUE_DEADLINE_S).toBe(10);
    expect(config.INTERACTION_QUEUE_DEADLINE_ROUNDS).toBe(3);
    expect(interactionTiming(config)).toEqual({ deadlineMs: 10000, rounds: 3 });
  });

  it('fractional seconds are accepted (tests use 0.3)', () => {
    const config = loadConfig({ INTERACTION_QUEUE_DEADLINE_S: '0.3', INTERACTION_QUEUE_DEADLINE_ROUNDS: '5' });
    expect(interactionTiming(config)).toEqual({ deadlineMs: 300, rounds: 5 });
  });

  it.each([
    ['INTERACTION_QUEUE_DEADLINE_S', '0'],
    ['INTERACTION_QUEUE_DEADLINE_S', 'soon'],
    ['INTERACTION_QUEUE_DEADLINE_ROUNDS', '0'],
    ['INTERACTION_QUEUE_DEADLINE_ROUNDS', '1.5'],
  ])('%s=%s stops the start with a message naming it', (key, value) => {
    expect(() => loadConfig({ [key]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [key]: value })).toThrow(key);
  });
});
