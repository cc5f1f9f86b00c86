import { describeError, errorLine } from './cli-error';
import { buildProgram } from './program';

/** The `hooktrail` command (bin/hooktrail.js): a client of the Hooktrail API. */
async function main(): Promise<void> {
  try {
    await buildProgram(process.env).parseAsync(process.argv);
  } catch (error) {
    process.stderr.write(errorLine(describeError(error)));
    process.exitCode = 1;
  }
}

void main();
