import { pino, type Logger } from 'pino';

/**
 * Structured logs, one JSON line per event. Keys never reach a log line: the redaction list is a
 * second line of defence, the first is never passing them to the logger.
 *
 * Lines are buffered and written asynchronously, at 4 KiB or every 250 ms, and flushed on exit
 * (pino's own destination): stdout is usually a pipe to a log collector, and a write per line
 * cost the event loop tens of microseconds whenever the reader lagged, once per turn.
 */
export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      base: { service: 'parley' },
      redact: { paths: ['api_key', 'apiKey', 'key', 'authorization', '*.api_key', '*.authorization'], censor: '[redacted]' },
    },
    pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 }),
  );
}
export type { Logger };
