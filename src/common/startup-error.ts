/** A start-up failure that is explained in one line (no stack trace): bad config, a service not reachable. */
export class StartupError extends Error {}
