export interface GroupCommitOptions<TItem> {
  /** Batches being committed at once (one database connection each). */
  maxInFlight: number;
  /** Items per batch at most. */
  maxBatchItems: number;
  /** Summed `sizeOf` per batch at most (a single larger item still goes alone). */
  maxBatchBytes: number;
  sizeOf(item: TItem): number;
}

export class GroupCommitClosedError extends Error {
  constructor() {
    super('the writer is shutting down');
  }
}

interface Waiting<TItem, TResult> {
  item: TItem;
  resolve(result: TResult): void;
  reject(error: unknown): void;
}

/**
 * Group commit (used by the capture writer and the delivery repository): items submitted while every slot is busy wait together and are committed as one batch
 * as soon as a slot frees up. At low load an item is committed alone at once (no timer adds latency);
 * under load, batches grow with the queue, so one commit serves many requests. Each submitter's promise
 * settles only after the commit of its batch: with its own result, or with the batch's error.
 */
export class GroupCommit<TItem, TResult> {
  private waiting: Waiting<TItem, TResult>[] = [];
  private inFlight = 0;
  private closing = false;
  private drained: (() => void) | null = null;

  constructor(
    private readonly commit: (items: TItem[]) => Promise<TResult[]>,
    private readonly options: GroupCommitOptions<TItem>,
  ) {}

  submit(item: TItem): Promise<TResult> {
    if (this.closing) return Promise.reject(new GroupCommitClosedError());
    return new Promise<TResult>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.dispatch();
    });
  }

  /** Refuses new items, then waits until everything already submitted is committed. */
  close(): Promise<void> {
    this.closing = true;
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => (this.drained = resolve));
  }

  private isIdle(): boolean {
    return this.inFlight === 0 && this.waiting.length === 0;
  }

  private dispatch(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      this.inFlight += 1;
      void this.run(this.takeBatch());
    }
  }

  private takeBatch(): Waiting<TItem, TResult>[] {
    let count = 0;
    let bytes = 0;
    while (count < this.waiting.length && count < this.options.maxBatchItems) {
      const size = this.options.sizeOf(this.waiting[count].item);
      if (count > 0 && bytes + size > this.options.maxBatchBytes) break;
      bytes += size;
      count += 1;
    }
    return this.waiting.splice(0, count);
  }

  private async run(batch: Waiting<TItem, TResult>[]): Promise<void> {
    try {
      const results = await this.commit(batch.map((entry) => entry.item));
      batch.forEach((entry, index) => entry.resolve(results[index]));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    } finally {
      this.inFlight -= 1;
      this.dispatch();
      if (this.drained && this.isIdle()) this.drained();
    }
  }
}
