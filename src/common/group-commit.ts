export interface GroupCommitOptions<TItem> {
  /** Batches being committed at once (one database connection each). */
  maxInFlight: number;
  /** Items per batch at most. */
  maxBatchItems: number;
  /** Summed `sizeOf` per batch at most (a single larger item still goes alone). */
  maxBatchBytes: number;
  sizeOf(item: TItem): number;
  /**
   * Items allowed to wait for a batch, and their summed `sizeOf`: beyond either, `submit` refuses at once
   * with GroupCommitFullError (an item still goes when nothing waits, whatever its size). Unbounded when unset.
   */
  maxWaitingItems?: number;
  maxWaitingBytes?: number;
  /**
   * While another batch commits, a free slot waits for company: it starts once as many items wait as each
   * batch committing holds on average (or a full batch waits), once the oldest has waited this long (ms),
   * or once no batch commits any more. Unset: it starts at once. A batch's commit has a fixed cost (a round
   * trip, a WAL flush); under load, slots that start at once commit the first item to arrive alone.
   */
  lingerMs?: number;
}

export class GroupCommitClosedError extends Error {
  constructor() {
    super('the writer is shutting down');
  }
}

/** Too much is waiting already: the item was refused before it was queued. */
export class GroupCommitFullError extends Error {
  constructor() {
    super('too many items are waiting to be committed');
  }
}

/** The item's deadline passed: before its batch started (it was never written) or before its batch committed. */
export class GroupCommitDeadlineError extends Error {
  constructor(readonly written: 'no' | 'unknown') {
    super(
      written === 'no'
        ? 'no batch could take the item before its deadline'
        : 'its batch did not commit before the deadline',
    );
  }
}

/** When an item must be answered, and how long before that its batch must start (epoch ms, ms). */
export interface CommitDeadline {
  answerBy: number;
  commitAllowanceMs: number;
}

interface Waiting<TItem, TResult> {
  item: TItem;
  size: number;
  deadline?: CommitDeadline;
  since: number;
  settled: boolean;
  resolve(result: TResult): void;
  reject(error: unknown): void;
}

/**
 * Group commit (used by the capture writer and the delivery repository): items submitted while every slot is
 * busy wait together and are committed as one batch as soon as a slot frees up. At low load an item is
 * committed alone at once (no timer adds latency); under load, batches grow with the queue, so one commit
 * serves many requests. Each submitter's promise settles only after the commit of its batch: with its own
 * result, or with the batch's error. With `lingerMs`, a slot that frees up while another batch commits
 * waits a moment for company instead of committing the first item to arrive alone (see the option).
 *
 * Admission, for callers that owe someone an answer in time (the capture URL): the queue is bounded (items
 * and bytes), and an item may carry a deadline. One that has not started its commit `commitAllowanceMs`
 * before its deadline is rejected and never written; one whose batch is still committing at the deadline is
 * rejected then, without waiting for the batch (the commit function should bound itself by the same
 * allowance, e.g. with a statement time-out, so that a late batch is rolled back rather than committed).
 */
export class GroupCommit<TItem, TResult> {
  private waiting: Waiting<TItem, TResult>[] = [];
  private waitingBytes = 0;
  private inFlight = 0;
  private inFlightItems = 0;
  private lingerTimer: NodeJS.Timeout | null = null;
  private closing = false;
  private drained: (() => void) | null = null;
  private expiryTimer: NodeJS.Timeout | null = null;
  /**
   * No waiting item must start its commit before this time (epoch ms): the earliest start-by time of those
   * with a deadline, or earlier once that item has left in a batch. Until it passes, nobody is late, and
   * a submit costs no look at the queue.
   */
  private earliestStartBy = Infinity;

  /**
   * `commit` is given the batch and its start-by time (epoch ms; Infinity when no item has a deadline): a
   * commit that writes in several statements starts none after it.
   */
  constructor(
    private readonly commit: (items: TItem[], startBy: number) => Promise<TResult[]>,
    private readonly options: GroupCommitOptions<TItem>,
  ) {}

  /** Items waiting for a batch now (a measure of back-pressure). */
  get queued(): number {
    return this.waiting.length;
  }

  submit(item: TItem, deadline?: CommitDeadline): Promise<TResult> {
    if (this.closing) return Promise.reject(new GroupCommitClosedError());
    const size = this.options.sizeOf(item);
    if (this.waiting.length > 0 && this.isFull(size)) return Promise.reject(new GroupCommitFullError());
    return new Promise<TResult>((resolve, reject) => {
      this.waiting.push({ item, size, deadline, since: Date.now(), settled: false, resolve, reject });
      this.waitingBytes += size;
      if (deadline) this.earliestStartBy = Math.min(this.earliestStartBy, startByOf(deadline));
      this.dispatch();
      if (deadline && this.waiting.length > 0) this.armExpiry();
    });
  }

  /** Refuses new items, then waits until everything already submitted is committed. */
  close(): Promise<void> {
    this.closing = true;
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => (this.drained = resolve));
  }

  private isFull(size: number): boolean {
    const { maxWaitingItems = Infinity, maxWaitingBytes = Infinity } = this.options;
    return this.waiting.length >= maxWaitingItems || this.waitingBytes + size > maxWaitingBytes;
  }

  private isIdle(): boolean {
    return this.inFlight === 0 && this.waiting.length === 0;
  }

  private dispatch(): void {
    this.expireWaiting();
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      if (!this.mayStart()) {
        this.armLinger();
        break;
      }
      this.inFlight += 1;
      const batch = this.takeBatch();
      this.inFlightItems += batch.length;
      void this.run(batch);
    }
    this.settleDrained();
  }

  /** Whether a free slot starts a batch now (always, without a linger or when nothing commits). */
  private mayStart(): boolean {
    const { lingerMs } = this.options;
    if (lingerMs === undefined || this.inFlight === 0) return true;
    return (
      this.waiting.length * this.inFlight >= this.inFlightItems ||
      this.waiting.length >= this.options.maxBatchItems ||
      this.waitingBytes >= this.options.maxBatchBytes ||
      Date.now() - this.waiting[0].since >= lingerMs
    );
  }

  /** One timer, for when the oldest waiting item's linger is over. */
  private armLinger(): void {
    if (this.lingerTimer) return;
    const dueIn = (this.options.lingerMs as number) - (Date.now() - this.waiting[0].since);
    this.lingerTimer = setTimeout(
      () => {
        this.lingerTimer = null;
        this.dispatch();
      },
      Math.max(0, dueIn),
    );
    this.lingerTimer.unref();
  }

  private takeBatch(): Waiting<TItem, TResult>[] {
    let count = 0;
    let bytes = 0;
    while (count < this.waiting.length && count < this.options.maxBatchItems) {
      const size = this.waiting[count].size;
      if (count > 0 && bytes + size > this.options.maxBatchBytes) break;
      bytes += size;
      count += 1;
    }
    this.waitingBytes -= bytes;
    return this.waiting.splice(0, count);
  }

  /** Rejects the waiting items that can no longer start their commit in time (they are never written). */
  private expireWaiting(): void {
    const now = Date.now();
    if (now <= this.earliestStartBy) return;
    this.earliestStartBy = Infinity;
    this.waiting = this.waiting.filter((entry) => {
      if (!entry.deadline) return true;
      const startBy = startByOf(entry.deadline);
      if (now <= startBy) {
        this.earliestStartBy = Math.min(this.earliestStartBy, startBy);
        return true;
      }
      this.waitingBytes -= entry.size;
      settle(entry, () => entry.reject(new GroupCommitDeadlineError('no')));
      return false;
    });
  }

  /** One timer for the earliest start-by time of the waiting items, so that they are refused on time. */
  private armExpiry(): void {
    if (this.expiryTimer || !Number.isFinite(this.earliestStartBy)) return;
    this.expiryTimer = setTimeout(
      () => {
        this.expiryTimer = null;
        this.expireWaiting();
        if (this.waiting.length > 0) this.armExpiry();
        this.settleDrained();
      },
      Math.max(0, this.earliestStartBy - Date.now() + 1),
    );
    this.expiryTimer.unref();
  }

  private async run(batch: Waiting<TItem, TResult>[]): Promise<void> {
    const deadlines = batch.flatMap((entry) => (entry.deadline ? [entry.deadline] : []));
    const answerBy = Math.min(...deadlines.map((deadline) => deadline.answerBy));
    const watchdog = Number.isFinite(answerBy)
      ? setTimeout(() => {
          for (const entry of batch)
            settle(entry, () => entry.reject(new GroupCommitDeadlineError('unknown')));
        }, answerBy - Date.now())
      : null;
    try {
      const results = await this.commit(
        batch.map((entry) => entry.item),
        Math.min(...deadlines.map(startByOf)),
      );
      batch.forEach((entry, index) => settle(entry, () => entry.resolve(results[index])));
    } catch (error) {
      for (const entry of batch) settle(entry, () => entry.reject(error));
    } finally {
      if (watchdog) clearTimeout(watchdog);
      this.inFlight -= 1;
      this.inFlightItems -= batch.length;
      this.dispatch();
    }
  }

  private settleDrained(): void {
    if (this.drained && this.isIdle()) this.drained();
  }
}

/** The latest time an item's batch may start (epoch ms). */
function startByOf(deadline: CommitDeadline): number {
  return deadline.answerBy - deadline.commitAllowanceMs;
}

function settle<TItem, TResult>(entry: Waiting<TItem, TResult>, settleWith: () => void): void {
  if (entry.settled) return;
  entry.settled = true;
  settleWith();
}
