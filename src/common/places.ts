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
    if (this.active < this.size) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.active--;
  }
}
