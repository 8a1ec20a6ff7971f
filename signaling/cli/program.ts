import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.ts';
import { UsageError, type CliCommand, type CliIo } from './cli-io.ts';
import { keysCommand } from './keys-command.ts';
import { migrateCommand } from './migrate-command.ts';
import { sessionsCommand } from './sessions-command.ts';
import { startCommand } from './start-command.ts';

/** Every command, one module each; a new command is one more entry here. */
const COMMANDS: readonly CliCommand[] = [startCommand, keysCommand, sessionsCommand, migrateCommand];

// By the package's own name, so the sources and the compiled package (dist/) find the same file.
const VERSION = (createRequire(import.meta.url)('parley-realtime/package.json') as { version: string }).version;

export function buildProgram(io: CliIo): Command {
  const program = new Command('parley')
    .description('Parley, a realtime conversation server: voice or text with an AI assistant over one WebSocket.')
    .version(VERSION)
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride()
    .showHelpAfterError('(parley --help lists the commands)')
    .enablePositionalOptions();
  for (const command of COMMANDS) program.addCommand(command(io));
  // Subcommands made by the factories inherit these only if set before they parse.
  for (const command of program.commands) inherit(command, io);
  return program;
}

/**
 * Runs one command line and resolves with its exit code: 0 done, 1 an operational failure, 2 a
 * usage or configuration mistake. A long-running command (start) resolves once it is serving.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof UsageError || error instanceof ConfigError) {
      io.stderr(`parley: ${error.message}\n`);
      return 2;
    }
    // Operational failures (unwritable DATA_DIR, a locked database, a busy port): the message is enough to act on.
    io.stderr(`parley: error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

function inherit(command: Command, io: CliIo): void {
  command.configureOutput({ writeOut: io.stdout, writeErr: io.stderr }).exitOverride();
  for (const sub of command.commands) inherit(sub, io);
}
