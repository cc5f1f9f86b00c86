/**
 * CAPTURE_RATE_LIMIT_PER_S: at most `limitPerSecond` captures per endpoint token in each clock second
 * (a fixed one-second window), counted in memory by this process; with several API processes behind a
 * load balancer each allows that many. Without a limit every capture is allowed.
 */
export class CaptureRateLimiter {
  private window = -1;
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly limitPerSecond: number | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one capture for the token; false when the token is over its limit in this second. */
  tryAcquire(token: string): boolean {
    if (this.limitPerSecond === undefined) return true;
    const window = Math.floor(this.now() / 1000);
    if (window !== this.window) {
      this.window = window;
      this.counts.clear();
    }
    const used = this.counts.get(token) ?? 0;
    if (used >= this.limitPerSecond) return false;
    this.counts.set(token, used + 1);
    return true;
  }
}
