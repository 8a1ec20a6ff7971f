import { ConfigError, loadConfig } from './config.ts';
import { devRoutesEnabled } from './http/dev-routes.ts';
import { startServer } from './server.ts';

/** `npm start`: read configuration, serve, drain on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`parley: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const server = await startServer(config);
  process.stdout.write(`parley: listening on ${server.url} (demo at ${server.url}/, WebSocket at ${server.url.replace(/^http/, 'ws')}/ws)\n`);
  if (!devRoutesEnabled(server.context)) {
    process.stdout.write('parley: the demo page needs a key: paste one from `npm run keys -- create --account you`, or start with DEV_ROUTES=on (pages on this machine only)\n');
  }
  // No recogniser with an English model installs through npm alone (README: "Voice with no
  // system packages"), so a fresh machine says once, plainly, what voice needs.
  const voice = server.context.voice;
  if (!voice.ok) process.stdout.write(`parley: voice is off, text works: ${voice.reason}\n`);
  const shutdown = (signal: string): void => {
    server.context.log.info({ signal }, 'shutdown requested');
    // A second signal, or a drain that overruns its bound, exits at once.
    const force = setTimeout(() => process.exit(1), config.DRAIN_TIMEOUT_MS + 2000);
    force.unref();
    server.stop().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`parley: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
