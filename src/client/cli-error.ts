/** A failure the user can act on: its message is printed as is, after `hooktrail: `. */
export class CliError extends Error {}

/** Said after every "endpoint not found": where the user finds the names and ids they may give. */
export const ENDPOINTS_LIST_HINT = '(see hooktrail endpoints list)';

/**
 * What went wrong, in words. Node's fetch reports a network failure as "fetch failed" (or a
 * broken stream as "terminated") with the useful part (ECONNREFUSED, "other side closed") in `cause`.
 */
export function describeError(error: unknown): string {
  const cause = error instanceof Error && !(error instanceof CliError) ? error.cause : undefined;
  return cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
}

/** How every error is printed: one line on stderr, so that a script can show it as it is. */
export function errorLine(message: string): string {
  return `hooktrail: ${message.replace(/\s*\n\s*/g, ' ').trim()}\n`;
}
