import type { SharedCount } from '../../redis/shared-counter';

/** A window's count lapses this long after it began: a second, and room for clocks a little apart. */
const WINDOW_TTL_MS = 2000;

/**
 * CAPTURE_RATE_LIMIT_PER_S: at most `limitPerSecond` captures per endpoint token in each clock second (a
 * fixed one-second window), counted in Redis, so that every API process counts against one limit. While
 * Redis is away or slow to answer, the process counts in its own memory instead (the limit then holds
 * per process). Without a limit every capture is allowed, and nothing is counted.
 */
export class CaptureRateLimiter {
  private window = -1;
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly limitPerSecond: number | undefined,
    private readonly shared: SharedCount,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one capture for the token; false when the token is over its limit in this second. */
  async tryAcquire(token: string): Promise<boolean> {
    if (this.limitPerSecond === undefined) return true;
    const second = Math.floor(this.now() / 1000);
    const total = await this.shared(`${token}:${second}`, WINDOW_TTL_MS).catch(() => null);
    return total === null ? this.countHere(token, second) : total <= this.limitPerSecond;
  }

  private countHere(token: string, second: number): boolean {
    if (second !== this.window) {
      this.window = second;
      this.counts.clear();
    }
    const used = this.counts.get(token) ?? 0;
    if (used >= (this.limitPerSecond as number)) return false;
    this.counts.set(token, used + 1);
    return true;
  }
}
