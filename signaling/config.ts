import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { METERS, type Meter } from '../session/protocol/usage.ts';
import { flag, optionalLimit, optionalUrl, port, positiveInt } from './config-fields.ts';
import { VOICE_SETTINGS } from './voice-config.ts';

/**
 * Every setting the server reads, validated once at start. A bad value stops the start with a
 * message naming the variable, so a typo never turns into a silent default in production.
 */

/** PRICES: a JSON object from meter to units per meter unit, e.g. {"session_s":1,"llm_output_tokens":0.002}. */
const Prices = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object, e.g. {"session_s":1}' });
      return z.NEVER;
    }
  })
  .pipe(z.record(z.string(), z.number().min(0).max(1e9)))
  .refine((prices) => Object.keys(prices).every((key) => (METERS as readonly string[]).includes(key)), `keys must be meters: ${METERS.join(', ')}`)
  .transform((prices) => prices as Partial<Record<Meter, number>>);
export const ConfigSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port.default(8080),
  DATA_DIR: z.string().min(1).default('./data'),
  /** Feedback or client-error reports kept per file before it is rotated to `<file>.1`. */
  REPORTS_MAX_BYTES: z.coerce.number().int().min(65536).default(10 * 1024 * 1024),
  /** With DATABASE_URL: feedback or client-error reports kept per kind (the oldest go first). */
  REPORTS_MAX_ROWS: z.coerce.number().int().min(100).default(100_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  SCOPED_KEY_TTL_S: positiveInt.default(7800),
  SCOPED_KEY_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  /**
   * POST /dev/session-key for the demo page: off unless asked for (on; or auto, meaning on while
   * HOST is a loopback address). Even when on it answers loopback pages only.
   */
  DEV_ROUTES: z.enum(['auto', 'on', 'off']).default('off'),

  MAX_SESSIONS: positiveInt.default(1000),
  /** Failed key checks and resume attempts one address may make per AUTH_FAILURE_WINDOW_S. */
  AUTH_FAILURES_PER_ADDRESS: positiveInt.default(20),
  AUTH_FAILURE_WINDOW_S: positiveInt.default(60),
  /** Failed resume attempts on one socket before it is closed. */
  RESUME_FAILURES_PER_CONNECTION: positiveInt.default(5),
  MAX_FRAME_BYTES: positiveInt.default(262144),
  START_TIMEOUT_MS: positiveInt.default(10000),
  HEARTBEAT_INTERVAL_MS: positiveInt.default(15000),
  DRAIN_TIMEOUT_MS: positiveInt.default(5000),
  RESUME_TTL_S: positiveInt.default(150),
  /** Unsent bytes on a socket past which downlink audio is dropped rather than queued. */
  AUDIO_BACKLOG_BYTES: positiveInt.default(65536),
  /** Unsent bytes past which a client counts as behind; behind for SLOW_CONSUMER_MS, it is closed. */
  SEND_BACKLOG_LIMIT_BYTES: positiveInt.default(1048576),
  SLOW_CONSUMER_MS: positiveInt.default(5000),
  /**
   * Characters of conversation a session keeps for the model; past it the oldest messages are
   * dropped (one note says so), so a model request never outgrows instructions + this.
   */
  HISTORY_MAX_CHARS: z.coerce.number().int().min(4000).default(100_000),

  GREETING: z.string().min(1).max(2000).default('Hello! How can I help you today?'),
  /** flite's kal16: the clearest offline voice by recogniser round trip (bench/voices.ts). */
  DEFAULT_VOICE: z.string().min(1).default('kal16'),
  DEFAULT_TEMPERATURE: z.coerce.number().min(0).max(2).default(0.7),

  LLM_PROVIDER: z.enum(['local', 'openai']).default('local'),
  LLM_BASE_URL: optionalUrl,
  LLM_API_KEY: z.string().min(1).optional(),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  LLM_DEEP_MODEL: z.string().min(1).optional(),
  /** Request sent → response headers, for the model. */
  LLM_TIMEOUT_MS: positiveInt.default(60000),
  /** Longest silence inside a started model stream before the turn fails (model_error). */
  LLM_IDLE_TIMEOUT_MS: positiveInt.default(30000),
  /** Connections kept open per provider origin (keep-alive); requests beyond wait in turn. */
  PROVIDER_CONNECTIONS: z.coerce.number().int().min(1).max(4096).default(256),
  /** Pace of the local model's words; 0 streams as fast as the event loop allows. */
  LOCAL_LLM_WORD_DELAY_MS: z.coerce.number().int().min(0).max(5000).default(20),

  ...VOICE_SETTINGS,

  /** Default per-call timeout for client tools without their own timeout_ms. */
  TOOL_TIMEOUT_MS: positiveInt.default(30000),
  DEFERRED_TIMEOUT_S: positiveInt.default(600),
  PERMISSION_TIMEOUT_S: positiveInt.default(60),
  END_CALL_GRACE_MS: positiveInt.default(4000),
  WRAP_UP_SIGN_OFF: z.string().min(1).max(500).default('Thanks for talking with me. Goodbye!'),
  /**
   * Interaction narration watchdog: every INTERACTION_QUEUE_DEADLINE_S seconds (fractions
   * allowed) a queued ask retries for the floor; after INTERACTION_QUEUE_DEADLINE_ROUNDS
   * unsuccessful rounds of one delivery cycle (or that many unheard spoken attempts) it fails.
   */
  INTERACTION_QUEUE_DEADLINE_S: z.coerce.number().positive().max(3600).default(10),
  INTERACTION_QUEUE_DEADLINE_ROUNDS: z.coerce.number().int().min(1).max(100).default(3),
  /** SearXNG base URL for the managed web_search tool. */
  SEARCH_URL: optionalUrl,
  /** Bounds a web search: the answer's headers, and any gap in its body. */
  SEARCH_TIMEOUT_MS: positiveInt.default(8000),

  /** WebRTC: comma-separated STUN URLs handed to clients (none by default: loopback and LAN work without). */
  STUN_URLS: z.string().optional(),
  /** WebRTC: comma-separated TURN URLs; with TURN_SECRET, clients get short-lived credentials. */
  TURN_URLS: z.string().optional(),
  TURN_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  TURN_TTL_S: positiveInt.default(3600),
  /** WebRTC: an extra address to offer as a host candidate (a public IP bound on this machine). */
  WEBRTC_PUBLIC_IP: z.string().optional(),
  /** WebRTC: connect over 127.0.0.1 pairs only (tests, single-machine setups). */
  WEBRTC_LOOPBACK_ONLY: flag.default(false),
  WEBRTC_PORT_MIN: z.coerce.number().int().min(1024).max(65535).optional(),
  WEBRTC_PORT_MAX: z.coerce.number().int().min(1024).max(65535).optional(),
  /**
   * WebRTC: threads that run the calls' peer connections (ICE, DTLS, SRTP, RTP pacing, Opus
   * decoding); 0 runs them on the main thread. Default: one per core beyond the first (the main
   * thread keeps one), at least 1, at most 4. On a single core one worker beat both none and two
   * in the benchmark: the worker's pacing is not held up by the sessions, and threads competing
   * for one core add their own delays.
   */
  WEBRTC_MEDIA_WORKERS: z.coerce.number().int().min(0).max(32).default(Math.min(4, Math.max(1, availableParallelism() - 1))),
  /**
   * WebRTC: the media worker threads' Linux nice value (−20 highest … 19 lowest; 0 = as the
   * process). Packets are due every 20 ms while the sessions' work is handed over ahead of time,
   * so the media threads go first on a busy core. Raising priority needs CAP_SYS_NICE (root, or
   * docker --cap-add SYS_NICE); without it the server logs a warning once and runs unchanged.
   */
  WEBRTC_MEDIA_WORKER_NICE: z.coerce.number().int().min(-20).max(19).default(-10),
  /**
   * WebRTC: start the media workers before listening and wait until each has loaded werift and
   * Opus (voice on and WEBRTC_MEDIA_WORKERS > 0), so the first call after a start is not the one
   * that waits for them; a worker that dies is then replaced at once. 0: each starts at the first call.
   */
  WEBRTC_WARM_WORKERS: flag.default(true),
  /**
   * With WEBRTC_WARM_WORKERS: each media worker makes one loopback call to itself before it says
   * ready (bounded; a failure is logged and it is ready anyway), so the first real call does not
   * pay werift's first use. Off by default: it costs a start about 0.56 s and saves the first
   * call of a process 22 ms to answer and 30 ms to connect (bench/results-rtc.md).
   */
  WEBRTC_WARM_CALL: flag.default(false),
  /** The longest wait for that; past it the server listens anyway (logged) and the workers go on starting. */
  WEBRTC_WORKER_START_TIMEOUT_MS: positiveInt.default(30000),

  TRUST_PROXY: flag.default(false),

  /**
   * Usage, credit and limits. PRICES turn usage into units, taken off an account's credit when it
   * has a balance (accounts without one are unlimited). Notices: session_closing_soon goes
   * CLOSING_NOTICE_S ahead of every close the server plans; low_credit_warning when the credit
   * would last less than LOW_CREDIT_WARNING_S at the session's current rate.
   */
  PRICES: Prices.default({ session_s: 1 }),
  LOW_CREDIT_WARNING_S: z.coerce.number().int().min(0).max(86_400).default(300),
  CLOSING_NOTICE_S: z.coerce.number().int().min(0).max(3600).default(60),
  /** A conversation's longest life, resumes included; unset: no cap. */
  MAX_SESSION_S: optionalLimit,
  /** No user input and no reply ending for this long: the assistant wraps up (sign-off, close 1000 idle); unset: never. */
  IDLE_TIMEOUT_S: optionalLimit,
  /** Per-account limits (defaults; `npm run keys -- limits` overrides them per account). */
  MAX_SESSIONS_PER_ACCOUNT: optionalLimit,
  SESSION_STARTS_PER_MINUTE: optionalLimit,
  KEY_EXCHANGES_PER_MINUTE: optionalLimit,
  INPUT_TEXT_PER_SECOND: optionalLimit,
  /** Ask OpenAI-compatible models for their token usage (stream_options.include_usage); 0 for servers that refuse it. */
  LLM_STREAM_USAGE: flag.default(true),
  /** /metrics: when set, readers send it as Authorization: Bearer; unset, only loopback clients may read. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Bound of each /readyz dependency check (a store ping, a provider connect). */
  READYZ_TIMEOUT_MS: positiveInt.default(1000),
  /** OpenTelemetry traces go to this OTLP/HTTP collector (<endpoint>/v1/traces); unset, tracing is off. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  /** Collector request headers, `key=value` pairs separated by commas (OpenTelemetry's format). */
  OTEL_EXPORTER_OTLP_HEADERS: z
    .string()
    .default('')
    .transform((list, ctx) => {
      const headers: Record<string, string> = {};
      for (const pair of list.split(',').map((p) => p.trim()).filter(Boolean)) {
        const eq = pair.indexOf('=');
        if (eq <= 0) {
          ctx.addIssue({ code: 'custom', message: `"${pair}" is not key=value` });
          return z.NEVER;
        }
        headers[decodeURIComponent(pair.slice(0, eq).trim())] = decodeURIComponent(pair.slice(eq + 1).trim());
      }
      return headers;
    }),
  OTEL_SERVICE_NAME: z.string().min(1).default('parley'),
  /**
   * Comma-separated origins (`https://app.example.org`) whose pages may open /ws; a browser
   * upgrade from any other Origin is refused with 403. Unset: every origin (as before).
   */
  ALLOWED_ORIGINS: z
    .string()
    .optional()
    .transform((list) => (list === undefined ? undefined : new Set(list.split(',').map((o) => o.trim().toLowerCase().replace(/\/+$/, '')).filter(Boolean))))
    .refine((origins) => origins === undefined || (origins.size > 0 && [...origins].every((o) => /^[a-z][a-z0-9+.-]*:\/\/[^/\s]+$/.test(o))), 'must be a comma-separated list of origins such as https://app.example.org'),

  /**
   * Several processes, one service. PostgreSQL holds accounts, keys and stored reports (SQLite in
   * DATA_DIR when unset); Redis holds live state: the resume stash, the live-session registry and
   * shared counters (this process's memory when unset).
   */
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// URL' }).optional(),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }).optional(),
  /** Prefix of every Redis key, so several deployments (or tests) can share one Redis. */
  REDIS_KEY_PREFIX: z.string().min(1).max(100).default('parley:'),
  /** A live session's lease in the shared registry: a crashed process's sessions vanish within it. */
  SESSION_LEASE_MS: z.coerce.number().int().min(300).max(600_000).default(15_000),
});

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Unset and empty variables both mean "use the default". */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present: Record<string, string> = {};
  for (const key of Object.keys(ConfigSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') present[key] = value;
  }
  const parsed = ConfigSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (issue) => `  ${issue.path.join('.') || '(config)'}: ${issue.message}`,
    );
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const config = parsed.data;
  const missing = (
    [
      ['LLM_BASE_URL', config.LLM_PROVIDER === 'openai' && !config.LLM_BASE_URL, 'LLM_PROVIDER'],
      ['ASR_BASE_URL', config.ASR_PROVIDER === 'openai' && !config.ASR_BASE_URL, 'ASR_PROVIDER'],
      ['TTS_BASE_URL', config.TTS_PROVIDER === 'openai' && !config.TTS_BASE_URL, 'TTS_PROVIDER'],
    ] as const
  ).filter(([, isMissing]) => isMissing);
  if (missing.length > 0) {
    const lines = missing.map(([name, , provider]) => `  ${name}: required when ${provider}=openai`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  if ((config.WEBRTC_PORT_MIN === undefined) !== (config.WEBRTC_PORT_MAX === undefined) || (config.WEBRTC_PORT_MIN ?? 0) >= (config.WEBRTC_PORT_MAX ?? 1)) {
    throw new ConfigError('invalid configuration:\n  WEBRTC_PORT_MIN/WEBRTC_PORT_MAX: set both, with MIN below MAX');
  }
  if (config.TTS_PROVIDER === 'openai') {
    // The flite default voice ('kal16') means nothing to an OpenAI-compatible endpoint.
    if (present.DEFAULT_VOICE === undefined) {
      config.DEFAULT_VOICE = config.TTS_VOICES[0]!;
    } else if (!config.TTS_VOICES.includes(config.DEFAULT_VOICE)) {
      throw new ConfigError(`invalid configuration:\n  DEFAULT_VOICE: "${config.DEFAULT_VOICE}" is not one of TTS_VOICES (${config.TTS_VOICES.join(', ')})`);
    }
  }
  return config;
}
