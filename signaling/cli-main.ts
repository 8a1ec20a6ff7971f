import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** Where a command-line tool writes; tests pass collectors. */
export type CliOut = { stdout(s: string): void; stderr(s: string): void };

export const processOut: CliOut = { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s) };

/** True when `moduleUrl` is the script node was started with, not a module a test imported. */
export function isMainModule(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return moduleUrl === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}
