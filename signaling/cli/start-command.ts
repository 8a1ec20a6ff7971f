import { Command } from 'commander';
import type { CliIo } from './cli-io.ts';

/** `parley start`: the server, configured from the environment; flags override it. */
export function startCommand(io: CliIo): Command {
  return new Command('start')
    .description('serve HTTP and the WebSocket until SIGTERM or SIGINT, then drain (settings: the environment, see the README)')
    .option('--port <port>', 'listen port (PORT)')
    .option('--host <host>', 'listen address (HOST)')
    .option('--data-dir <dir>', 'keys, secret and reports (DATA_DIR)')
    .action(async (options: { port?: string; host?: string; dataDir?: string }) => {
      const env = { ...io.env };
      if (options.port !== undefined) env.PORT = options.port;
      if (options.host !== undefined) env.HOST = options.host;
      if (options.dataDir !== undefined) env.DATA_DIR = options.dataDir;
      // Loaded here, so the other commands start without loading the whole server.
      const { serve } = await import('../serve.ts');
      await serve(env, io);
    });
}
