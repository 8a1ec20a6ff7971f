import { z } from 'zod';

/**
 * Every setting the server reads, validated once at start. A bad value stops the start with a
 * message naming the variable, so a typo never turns into a silent default in production.
 */

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const flag = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');
const optionalUrl = z.url().optional();

export const ConfigSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port.default(8080),
  DATA_DIR: z.string().min(1).default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  SCOPED_KEY_TTL_S: positiveInt.default(7800),
  SCOPED_KEY_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  /** auto: the dev key route is on only while HOST is a loopback address. */
  DEV_ROUTES: z.enum(['auto', 'on', 'off']).default('auto'),

  MAX_SESSIONS: positiveInt.default(1000),
  MAX_FRAME_BYTES: positiveInt.default(262144),
  START_TIMEOUT_MS: positiveInt.default(10000),
  HEARTBEAT_INTERVAL_MS: positiveInt.default(15000),
  DRAIN_TIMEOUT_MS: positiveInt.default(5000),
  RESUME_TTL_S: positiveInt.default(150),

  GREETING: z.string().min(1).max(2000).default('Hello! How can I help you today?'),
  DEFAULT_VOICE: z.string().min(1).default('slt'),
  DEFAULT_TEMPERATURE: z.coerce.number().min(0).max(2).default(0.7),

  LLM_PROVIDER: z.enum(['local', 'openai']).default('local'),
  LLM_BASE_URL: optionalUrl,
  LLM_API_KEY: z.string().min(1).optional(),
  LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  LLM_DEEP_MODEL: z.string().min(1).optional(),
  LLM_TIMEOUT_MS: positiveInt.default(60000),
  /** Pace of the local model's words; 0 streams as fast as the event loop allows. */
  LOCAL_LLM_WORD_DELAY_MS: z.coerce.number().int().min(0).max(5000).default(20),

  /** WebRTC VAD aggressiveness 0..3: higher calls more borderline audio non-speech. */
  VAD_AGGRESSIVENESS: z.coerce.number().int().min(0).max(3).default(3),
  TTS_WORKERS: z.coerce.number().int().min(1).max(16).default(1),
  /** Recognisers kept loaded and waiting, so an utterance never waits for a model load. */
  ASR_WARM_PROCESSES: z.coerce.number().int().min(1).max(32).default(2),

  TRUST_PROXY: flag.default(false),
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
  if (config.LLM_PROVIDER === 'openai' && !config.LLM_BASE_URL) {
    throw new ConfigError('invalid configuration:\n  LLM_BASE_URL: required when LLM_PROVIDER=openai');
  }
  return config;
}
