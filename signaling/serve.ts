import { loadConfig } from './config.ts';
import { devRoutesEnabled } from './http/dev-routes.ts';
import { startServer } from './server.ts';
import type { CliIo } from './cli/cli-io.ts';

/**
 * Serves until SIGTERM or SIGINT, then drains and exits 0 (1 when the drain fails). Throws
 * ConfigError for a bad setting, before anything listens.
 *
 * A supervisor may deliver the same signal more than once (systemd signals the whole process
 * group, and `npm start` forwards what it receives to us as well): only the first starts the
 * drain, later ones are logged and change nothing. The drain is bounded by DRAIN_TIMEOUT_MS; the
 * process exits at most 2 s after that whatever happens.
 */
export async function serve(env: CliIo['env'], out: Pick<CliIo, 'stdout'>): Promise<void> {
  const config = loadConfig(env);
  const server = await startServer(config);
  out.stdout(`parley: listening on ${server.url} (demo at ${server.url}/, WebSocket at ${server.url.replace(/^http/, 'ws')}/ws)\n`);
  if (!devRoutesEnabled(server.context)) {
    out.stdout('parley: the demo page needs a key: paste one from `parley keys create --account you` (`npm run keys -- create --account you` in a clone), or start with DEV_ROUTES=on (pages on this machine only)\n');
  }
  // No recogniser with an English model installs through npm alone (README: "Voice with no
  // system packages"), so a fresh machine says once, plainly, what voice needs.
  const voice = server.context.voice;
  if (!voice.ok) out.stdout(`parley: voice is off, text works: ${voice.reason}\n`);
  let draining = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    server.context.log.info({ signal, draining }, 'shutdown requested');
    if (draining) return;
    draining = true;
    const force = setTimeout(() => process.exit(1), config.DRAIN_TIMEOUT_MS + 2000);
    force.unref();
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
