/** The shortest and longest a deferred delivery waits before its job runs again. */
const MIN_DEFER_MS = 200;
const MAX_DEFER_MS = 5 * 60_000;
/** Weight of the newest attempt in the running mean of a destination's attempt durations. */
const DURATION_WEIGHT = 0.1;
/** Destinations remembered; past this, the longest-known idle ones are forgotten. */
const MAX_TRACKED = 10_000;
/** The fewest attempts a destination may always have in flight, however many share the process. */
const MIN_FAIR_SHARE = 4;

interface DestinationLoad {
  inFlight: number;
  /** Jobs this process deferred for the destination that have not come back yet (an estimate). */
  deferred: number;
  /** Running mean of its attempt durations; assumed stuck until one has ended. */
  meanDurationMs: number;
  measured: boolean;
  /** While not measured: when its first attempt started (how long it has kept us waiting so far). */
  firstStartedAt: number | null;
}

/**
 * Each destination's share of a worker process's in-flight attempts (`capacity`):
 * - A destination may hold at most a **fair share**, the capacity divided by the destinations that have
 *   attempts in flight (at least 4): alone it may use them all; a slow one that still answers within the
 *   time-out cannot take the places the others need.
 * - A **stuck** destination, one whose attempts run into the time-out (it hangs, drips, or black-holes
 *   connections), may hold at most `limit`.
 * A delivery refused a slot is deferred (its job runs again later, no attempt is counted), for about as
 * long as the deliveries deferred before it will take to be served at the destination's pace: deferred
 * jobs come back when there is room, not in a busy loop. A destination not measured yet is paced by how
 * long its first attempt has been waiting so far: quick when it answers at once, slower the longer it
 * keeps silent.
 *
 * Only attempts near the time-out count as stuck: when the worker is busy, every attempt waits for the
 * event loop and for its turn, so a merely slow mean would mark healthy destinations too.
 */
export class DestinationSlots {
  private readonly loads = new Map<string, DestinationLoad>();
  /** Destinations with attempts in flight. */
  private busy = 0;

  /**
   * `stuckAfterMs`: a destination whose attempts take this long on average is held to `limit`. One this
   * process has not seen an attempt end at is assumed stuck, so that one that hangs cannot take every
   * slot with its first burst; its first answer replaces the assumption. `capacity`: the attempts the
   * process makes at once, shared fairly by the destinations that have some in flight.
   */
  constructor(
    readonly limit: number,
    private readonly stuckAfterMs: number,
    private readonly capacity: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Takes a slot for an attempt at `destinationId`: true, or false when the destination has its share (or,
   * stuck, its limit) in flight, and the delivery should wait `deferFor()` ms. `returning` says the job
   * was deferred before.
   */
  tryAcquire(destinationId: string, returning: boolean): boolean {
    const load = this.loadOf(destinationId);
    if (returning && load.deferred > 0) load.deferred--;
    if (load.inFlight >= this.capOf(load)) return false;
    if (load.inFlight === 0) this.busy++;
    if (!load.measured) load.firstStartedAt ??= this.now();
    load.inFlight++;
    return true;
  }

  /** Frees the slot of an attempt that was not made after all (another limit deferred it). */
  cancel(destinationId: string): void {
    this.free(this.loadOf(destinationId));
  }

  /** Frees the slot of an attempt that took `durationMs`. */
  release(destinationId: string, durationMs: number): void {
    const load = this.loadOf(destinationId);
    this.free(load);
    load.meanDurationMs = load.measured
      ? load.meanDurationMs + DURATION_WEIGHT * (durationMs - load.meanDurationMs)
      : durationMs;
    load.measured = true;
    if (this.loads.size > MAX_TRACKED) this.forgetIdle();
  }

  /**
   * How long a delivery refused by `tryAcquire` waits: the deliveries deferred before it, at the pace
   * the destination answers (its share or limit at a time, each taking its expected duration), ±20 %.
   */
  deferFor(destinationId: string): number {
    const load = this.loadOf(destinationId);
    return this.paced(load, this.capOf(load));
  }

  /** The same for a delivery refused by the destination's own `max_in_flight`. */
  deferWithin(destinationId: string, maxInFlight: number): number {
    return this.paced(this.loadOf(destinationId), maxInFlight);
  }

  /** The attempts it may have in flight now: `limit` when stuck, else its fair share of the capacity. */
  private capOf(load: DestinationLoad): number {
    if (this.stuck(load)) return this.limit;
    const sharing = this.busy + (load.inFlight === 0 ? 1 : 0);
    return Math.max(MIN_FAIR_SHARE, Math.floor(this.capacity / sharing));
  }

  private stuck(load: DestinationLoad): boolean {
    return load.meanDurationMs >= this.stuckAfterMs;
  }

  private free(load: DestinationLoad): void {
    load.inFlight--;
    if (load.inFlight > 0) return;
    this.busy--;
    load.firstStartedAt = null;
  }

  /** Its mean attempt; before one has ended, how long its first attempt has been waiting (at least 0.2 s). */
  private expectedDurationMs(load: DestinationLoad): number {
    if (load.measured) return load.meanDurationMs;
    return Math.max(MIN_DEFER_MS, this.now() - (load.firstStartedAt ?? this.now()));
  }

  private paced(load: DestinationLoad, limit: number): number {
    load.deferred++;
    const pacedMs = (load.deferred * this.expectedDurationMs(load)) / limit;
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
      load = {
        inFlight: 0,
        deferred: 0,
        meanDurationMs: this.stuckAfterMs,
        measured: false,
        firstStartedAt: null,
      };
      this.loads.set(destinationId, load);
    }
    return load;
  }
}
