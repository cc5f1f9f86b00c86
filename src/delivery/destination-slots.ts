/** The shortest and longest a deferred delivery waits before its job runs again. */
const MIN_DEFER_MS = 200;
const MAX_DEFER_MS = 5 * 60_000;
/** Weight of the newest attempt in the running mean of a destination's attempt durations. */
const DURATION_WEIGHT = 0.1;
/** Destinations remembered; past this, the longest-known idle ones are forgotten. */
const MAX_TRACKED = 10_000;

interface DestinationLoad {
  inFlight: number;
  /** Jobs this process deferred for the destination that have not come back yet (an estimate). */
  deferred: number;
  /** Running mean of its attempt durations; assumed stuck until one has ended. */
  meanDurationMs: number;
  measured: boolean;
}

/**
 * Each destination's share of a worker process's in-flight attempts. A stuck destination, one whose
 * attempts run into the time-out (it hangs, drips, or black-holes connections), may hold at most `limit`
 * of them, so that it cannot take every slot and hold up the other destinations' deliveries. A delivery
 * to a stuck destination at its limit is deferred (its job runs again later, no attempt is counted), for
 * about as long as the deliveries deferred before it will take to be served at the destination's pace:
 * deferred jobs come back when there is room, not in a busy loop.
 *
 * Only attempts near the time-out count as stuck: when the worker is busy, every attempt waits for the
 * event loop and for its turn, so a merely slow mean would mark healthy destinations too.
 */
export class DestinationSlots {
  private readonly loads = new Map<string, DestinationLoad>();

  /**
   * `stuckAfterMs`: a destination whose attempts take this long on average is held to `limit`. One this
   * process has not seen an attempt end at is assumed stuck, so that one that hangs cannot take every
   * slot with its first burst; its first answer replaces the assumption.
   */
  constructor(
    readonly limit: number,
    private readonly stuckAfterMs: number,
  ) {}

  /**
   * Takes a slot for an attempt at `destinationId`: true, or false when the destination is stuck and at
   * its limit, and the delivery should wait `deferFor()` ms. `returning` says the job was deferred before.
   */
  tryAcquire(destinationId: string, returning: boolean): boolean {
    const load = this.loadOf(destinationId);
    if (returning && load.deferred > 0) load.deferred--;
    if (load.inFlight >= this.limit && this.isStuck(destinationId)) return false;
    load.inFlight++;
    return true;
  }

  /** Whether the destination's attempts run into the time-out (or none has ended yet): it is held to `limit`. */
  isStuck(destinationId: string): boolean {
    return this.loadOf(destinationId).meanDurationMs >= this.stuckAfterMs;
  }

  /** Frees the slot of an attempt that was not made after all (another limit deferred it). */
  cancel(destinationId: string): void {
    this.loadOf(destinationId).inFlight--;
  }

  /** Frees the slot of an attempt that took `durationMs`. */
  release(destinationId: string, durationMs: number): void {
    const load = this.loadOf(destinationId);
    load.inFlight--;
    load.meanDurationMs = load.measured
      ? load.meanDurationMs + DURATION_WEIGHT * (durationMs - load.meanDurationMs)
      : durationMs;
    load.measured = true;
    if (this.loads.size > MAX_TRACKED) this.forgetIdle();
  }

  /**
   * How long a delivery refused by `tryAcquire` waits: the deliveries deferred before it, at the pace
   * the destination answers (`limit` at a time, each taking its mean attempt duration), ±20 %.
   */
  deferFor(destinationId: string): number {
    const load = this.loadOf(destinationId);
    return this.paced(load, load.meanDurationMs, this.limit);
  }

  /**
   * The same for a delivery refused by the destination's own `max_in_flight`: such a destination is not
   * assumed stuck, so until one of its attempts has ended they are paced as quick ones.
   */
  deferWithin(destinationId: string, maxInFlight: number): number {
    const load = this.loadOf(destinationId);
    return this.paced(load, load.measured ? load.meanDurationMs : MIN_DEFER_MS, maxInFlight);
  }

  private paced(load: DestinationLoad, durationMs: number, limit: number): number {
    load.deferred++;
    const pacedMs = (load.deferred * durationMs) / limit;
    const jittered = pacedMs * (0.8 + Math.random() * 0.4);
    return Math.round(Math.min(MAX_DEFER_MS, Math.max(MIN_DEFER_MS, jittered)));
  }

  private forgetIdle(): void {
    for (const [destinationId, load] of this.loads) {
      if (this.loads.size <= MAX_TRACKED) return;
      if (load.inFlight === 0 && load.deferred === 0) this.loads.delete(destinationId);
    }
  }

  private loadOf(destinationId: string): DestinationLoad {
    let load = this.loads.get(destinationId);
    if (!load) {
      load = { inFlight: 0, deferred: 0, meanDurationMs: this.stuckAfterMs, measured: false };
      this.loads.set(destinationId, load);
    }
    return load;
  }
}
