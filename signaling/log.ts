import { pino, type Logger } from 'pino';

/**
 * Structured logs, one JSON line per event. Keys never reach a log line: the redaction list is a
 * second line of defence, the first is never passing them to the logger.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'parley' },
    redact: { paths: ['api_key', 'apiKey', 'key', 'authorization', '*.api_key', '*.authorization'], censor: '[redacted]' },
  });
}
export type { Logger };
