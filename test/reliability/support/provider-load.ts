import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';

export interface CaptureResult {
  /** HTTP status, or 0 when the request got no answer (connection refused, reset, no answer in time). */
  status: number;
  id?: string;
  error?: string;
  /** The Retry-After header of a non-200 answer. */
  retryAfter?: string;
  sentAt: number;
  /** From sending to the end of the answer (or the failure). */
  durationMs: number;
}

export interface LoadOptions {
  ratePerS: number;
  total: number;
  /** How long each request may wait for its answer before it counts as unanswered (status 0). */
  requestTimeoutMs?: number;
  /** The body of each request; "%n" is replaced by its index. */
  bodyTemplate?: string;
}

/** A load generator running in its own process. */
export interface ProviderLoad {
  /** Every request's outcome, once the last one is answered (or timed out). */
  results: Promise<CaptureResult[]>;
  /** Stops sending (what was sent is still awaited) or, once `results` settled, does nothing. */
  stop(): void;
}

const SCRIPT = join(__dirname, '..', '..', 'support', 'load-generator.js');

/**
 * Starts `total` POSTs to `captureUrl` at `ratePerS` from a child process (test/support/load-generator.js),
 * as providers would send them: open loop, each on its own schedule whatever the service is doing, and on
 * an event loop and a CPU budget of their own, so that the test process never slows down the sender or
 * the service.
 */
export function startLoad(captureUrl: string, options: LoadOptions): ProviderLoad {
  const child: ChildProcess = fork(SCRIPT, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const results = new Promise<CaptureResult[]>((resolve, reject) => {
    child.once('message', (message: { results: CaptureResult[] }) => resolve(message.results));
    child.once('exit', (code, signal) =>
      reject(new Error(`the load generator exited (${code ?? signal}) before it reported`)),
    );
  });
  child.send({
    url: captureUrl,
    ratePerS: options.ratePerS,
    total: options.total,
    timeoutMs: options.requestTimeoutMs ?? 30_000,
    bodyTemplate: options.bodyTemplate ?? '{"n":%n}',
  });
  return {
    results,
    stop: () => {
      if (child.connected) child.send('stop');
    },
  };
}

/** `startLoad` and wait for every answer. */
export function captureAtRate(captureUrl: string, options: LoadOptions): Promise<CaptureResult[]> {
  return startLoad(captureUrl, options).results;
}

/** The distinct errors of the captures that got no answer (status 0), e.g. a time-out. */
export const requestErrors = (results: readonly CaptureResult[]): string[] => [
  ...new Set(results.flatMap((result) => (result.status === 0 && result.error ? [result.error] : []))),
];

/** Counts of each status, e.g. {"200": 980, "503": 20}. */
export function statusCounts(results: readonly CaptureResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results) counts[result.status] = (counts[result.status] ?? 0) + 1;
  return counts;
}

/** The ids the capture URL acknowledged. */
export const acknowledgedIds = (results: readonly CaptureResult[]): string[] =>
  results.flatMap((result) => (result.status === 200 && result.id ? [result.id] : []));

/** The `fraction` quantile (0..1) of the capture answer times, in ms. */
export function latencyQuantile(results: readonly CaptureResult[], fraction: number): number {
  const sorted = results.map((result) => result.durationMs).sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

/**
 * The captures that broke the promise of the capture URL: every request is answered within `boundMs`,
 * with 200 (stored) or 503 with Retry-After (not stored, try again).
 */
export function brokenAnswers(results: readonly CaptureResult[], boundMs: number): CaptureResult[] {
  return results.filter(
    (result) =>
      result.durationMs > boundMs ||
      !(result.status === 200 || (result.status === 503 && result.retryAfter !== undefined)),
  );
}

/**
 * The longest a provider may wait for an answer in the fault tests: the service answers within
 * CAPTURE_TIMEOUT_MS of reading a request; the provider also waits for the connection and for the request to
 * be read, which takes about the light-load p99 that the test measured on this machine at its start.
 */
export function answerBoundMs(captureTimeoutMs: number, lightLoadP99Ms: number): number {
  return captureTimeoutMs + 500 + 2 * lightLoadP99Ms;
}
