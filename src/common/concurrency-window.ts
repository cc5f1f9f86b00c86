export interface ConcurrencyWindowOptions {
  /** The window when the event loop keeps up, and its ceiling. */
  max: number;
  /** The window never shrinks below this, so that work always moves. */
  min: number;
  /** Event-loop delay (ms) above which the window shrinks. */
  targetDelayMs: number;
}

/** Share of the window kept when the loop is late (multiplicative decrease). */
const DECREASE = 0.7;
/** Share of `max` the window regains per calm reading while it is full (additive increase). */
const INCREASE = 0.05;

/**
 * How much background work one process runs at once, adjusted to its event loop (AIMD, as TCP does with
 * its congestion window): each reading of the loop's delay above the target shrinks the window by 30 %, each
 * calm reading while the window is in full use grows it by 5 % of `max`. Work waits for a place (`acquire`)
 * and gives it back (`release`). The delivery engine runs its attempts through one, so that forwarding never
 * takes the CPU the capture URL of the same process needs to answer in time.
 */
export class ConcurrencyWindow {
  private limit: number;
  private active = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly options: ConcurrencyWindowOptions) {
    this.limit = options.max;
  }

  /** The number of places now. */
  get size(): number {
    return this.limit;
  }

  get inUse(): number {
    return this.active;
  }

  /** Resolves when a place is free (at once, when one is). */
  acquire(): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    this.active--;
    this.admit();
  }

  /** Takes one reading of the event loop's delay. */
  observeDelay(delayMs: number): void {
    const { max, min, targetDelayMs } = this.options;
    if (delayMs > targetDelayMs) this.limit = Math.max(min, Math.floor(this.limit * DECREASE));
    else if (this.active >= this.limit) this.limit = Math.min(max, this.limit + Math.ceil(max * INCREASE));
    this.admit();
  }

  private admit(): void {
    while (this.active < this.limit && this.waiters.length > 0) {
      this.active++;
      this.waiters.shift()!();
    }
  }
}
