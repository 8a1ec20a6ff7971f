import { processIo } from './cli/cli-io.ts';
import { runCli } from './cli/program.ts';

/** `npm start`: what `parley start` does, configured from the environment only. */
const code = await runCli(['start'], processIo());
// A failed start may have left helpers running (speech processes): exit now with its code.
if (code !== 0) process.exit(code);
