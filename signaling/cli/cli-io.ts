import type { Command } from 'commander';

/** Where a command reads its environment and writes its output: the process, or a test. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
}

/** One `parley` command: a module exporting a factory, added to the list in program.ts. */
export type CliCommand = (io: CliIo) => Command;

/** A mistake the user can fix: one line on stderr, exit code 2, never a stack trace. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The process's own streams and environment. */
export function processIo(): CliIo {
  return { env: process.env, stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) };
}
