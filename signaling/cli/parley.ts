#!/usr/bin/env node
import { processIo } from './cli-io.ts';
import { runCli } from './program.ts';

// The `parley` command (the package's bin). `parley start` keeps the process running.
const code = await runCli(process.argv.slice(2), processIo());
// A failed command may have left helpers running (a failed start's speech processes): exit now.
if (code !== 0) process.exit(code);
