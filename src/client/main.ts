import { describeError, errorLine } from './cli-error';
import { buildProgram } from './program';

/** The `hooktrail` command (bin/hooktrail.js): a client of the Hooktrail API. */
async function main(): Promise<void> {
  // A reader that has read enough (`| head`) closes the pipe: stop quietly, as other command-line tools do.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(0);
  });
  try {
    await buildProgram(process.env).parseAsync(process.argv);
  } catch (error) {
    process.stderr.write(errorLine(describeError(error)));
    process.exitCode = 1;
  }
}

void main();
