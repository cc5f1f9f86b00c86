/**
 * A fixed number of places that work takes (`acquire`) and gives back (`release`): work beyond them waits,
 * in turn, for one to free up.
 */
export class Places {
  private active = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly size: number) {}

  get inUse(): number {
    return this.active;
  }

  /** Resolves when a place is free (at once, when one is). */
  acquire(): Promise<void> {
    return this.take((resolve) => this.waiters.push(resolve));
  }

  /**
   * The same, ahead of everyone waiting: for work that goes on from a place just given to it (the next
   * item of a batch keeps the batch's turn).
   */
  acquireAhead(): Promise<void> {
    return this.take((resolve) => this.waiters.unshift(resolve));
  }

  /** Runs `work` on a place, given back when it settles. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.active--;
  }

  private take(wait: (resolve: () => void) => void): Promise<void> {
    if (this.active < this.size) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise(wait);
  }
}
