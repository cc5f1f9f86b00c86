import { DestinationSlots } from './destination-slots';

/** Attempts taking this long on average (here: a 1.25 s time-out) mark a destination stuck. */
const STUCK_AFTER_MS = 1000;
/** The process's attempts at once, shared by the busy destinations. */
const CAPACITY = 200;

const slotsOf = (limit: number, now?: () => number) =>
  new DestinationSlots(limit, STUCK_AFTER_MS, CAPACITY, now);

/** Ends one attempt at `destinationId` that took `durationMs`, so that it is measured. */
function measure(slots: DestinationSlots, destinationId: string, durationMs: number): void {
  slots.tryAcquire(destinationId, false);
  slots.release(destinationId, durationMs);
}

/** How many attempts at `destinationId` may be in flight at once now (each taken, then cancelled). */
function allowedAtOnce(slots: DestinationSlots, destinationId: string): number {
  let taken = 0;
  while (taken < CAPACITY && slots.tryAcquire(destinationId, false)) taken++;
  for (let n = 0; n < taken; n++) slots.cancel(destinationId);
  return taken;
}

describe('DestinationSlots', () => {
  it('lets each destination hold at most its limit of attempts, independently of the others', () => {
    const slots = slotsOf(2);
    expect(slots.tryAcquire('slow', false)).toBe(true);
    expect(slots.tryAcquire('slow', false)).toBe(true);
    expect(slots.tryAcquire('slow', false)).toBe(false);
    expect(slots.tryAcquire('fast', false)).toBe(true);
    slots.release('slow', 2000);
    expect(slots.tryAcquire('slow', false)).toBe(true);
  });

  it('does not limit a destination that answers quickly: its slots come back at once', () => {
    const slots = slotsOf(2);
    slots.tryAcquire('fast', false);
    slots.release('fast', 20);
    for (let n = 0; n < 10; n++) expect(slots.tryAcquire('fast', false)).toBe(true);
    // Once its attempts run into the time-out, it is held to the limit again.
    for (let n = 0; n < 10; n++) slots.release('fast', 10_000);
    for (let n = 0; n < 2; n++) expect(slots.tryAcquire('fast', false)).toBe(true);
    expect(slots.tryAcquire('fast', false)).toBe(false);
  });

  it('holds a destination stuck until an attempt has ended, and while its attempts run into the time-out', () => {
    const slots = slotsOf(2);
    expect(allowedAtOnce(slots, 'd')).toBe(2);
    measure(slots, 'd', 20);
    expect(allowedAtOnce(slots, 'd')).toBe(CAPACITY);
    for (let n = 0; n < 30; n++) measure(slots, 'd', 1250);
    expect(allowedAtOnce(slots, 'd')).toBe(2);
  });

  it('defers for longer the more deliveries are already waiting, at the destination’s pace', () => {
    const slots = slotsOf(10);
    for (let n = 0; n < 10; n++) slots.tryAcquire('d', false);
    // Every attempt there takes 2 s: the mean moves towards it.
    for (let n = 0; n < 50; n++) {
      slots.release('d', 2000);
      slots.tryAcquire('d', false);
    }
    const first = slots.deferFor('d');
    for (let n = 0; n < 98; n++) slots.deferFor('d');
    const hundredth = slots.deferFor('d');
    // 100 waiting, 10 at a time, ≈ 2 s each: ≈ 20 s (±20 % jitter); the first one ≈ 0.2 s.
    expect(first).toBeGreaterThanOrEqual(200);
    expect(first).toBeLessThanOrEqual(1.2 * 200);
    expect(hundredth).toBeGreaterThanOrEqual(0.8 * 0.8 * 20_000);
    expect(hundredth).toBeLessThanOrEqual(1.2 * 20_000);
  });

  it('counts a deferred delivery as waiting until its job comes back', () => {
    const slots = slotsOf(1);
    slots.tryAcquire('d', false);
    for (let n = 0; n < 100; n++) slots.deferFor('d');
    for (let n = 0; n < 100; n++) expect(slots.tryAcquire('d', true)).toBe(false);
    // All came back: the next one waits only for the slot.
    expect(slots.deferFor('d')).toBeLessThanOrEqual(1.2 * 1000);
  });

  it('paces deliveries refused by a max_in_flight as quick ones until an attempt has ended, then at its mean', () => {
    const slots = slotsOf(50);
    // 30 waiting for 3 places of an unmeasured destination: 30 × 200 ms / 3 ≈ 2 s, not 30 × 1 s / 3.
    for (let n = 0; n < 29; n++) slots.deferWithin('d', 3);
    expect(slots.deferWithin('d', 3)).toBeLessThanOrEqual(1.2 * 2000);
    slots.tryAcquire('d', false);
    slots.release('d', 600);
    // Measured at 600 ms: the 31st waits ≈ 31 × 600 / 3 = 6.2 s.
    expect(slots.deferWithin('d', 3)).toBeGreaterThanOrEqual(0.8 * 6200);
  });

  it('never defers for longer than 5 minutes', () => {
    const slots = slotsOf(1);
    slots.tryAcquire('d', false);
    slots.release('d', 60_000);
    slots.tryAcquire('d', false);
    for (let n = 0; n < 1000; n++) slots.deferFor('d');
    expect(slots.deferFor('d')).toBe(5 * 60_000);
  });

  it('lets a destination alone use the whole capacity, and holds each to a fair share once others are busy', () => {
    const slots = slotsOf(50);
    measure(slots, 'slow', 500); // slow, but answering well within the time-out: not stuck
    measure(slots, 'fast', 20);
    for (let n = 0; n < CAPACITY; n++) expect(slots.tryAcquire('slow', false)).toBe(true);
    expect(slots.tryAcquire('slow', false)).toBe(false);
    // Another destination gets places at once; the slow one then gets none until it is below half.
    expect(slots.tryAcquire('fast', false)).toBe(true);
    for (let n = 0; n < CAPACITY / 2; n++) slots.release('slow', 500);
    expect(slots.tryAcquire('slow', false)).toBe(false);
    slots.release('slow', 500);
    expect(slots.tryAcquire('slow', false)).toBe(true);
    // Waiting for a fair share, it is paced at its own speed: 1 waiting, 100 at a time, 0.5 s each.
    expect(slots.deferFor('slow')).toBeLessThanOrEqual(1.2 * 200);
  });

  it('keeps at least 4 places for each destination however many are busy', () => {
    const slots = slotsOf(50);
    for (let d = 0; d < CAPACITY; d++) measure(slots, `d${d}`, 20);
    for (let d = 0; d < CAPACITY; d++) expect(slots.tryAcquire(`d${d}`, false)).toBe(true);
    for (let n = 0; n < 3; n++) expect(slots.tryAcquire('d0', false)).toBe(true);
    expect(slots.tryAcquire('d0', false)).toBe(false);
  });

  it('paces deliveries to a destination not measured yet by how long its first attempt has been waiting', () => {
    let now = 0;
    const slots = slotsOf(1, () => now);
    slots.tryAcquire('silent', false);
    // Just started: the next waits the shortest pause, not the assumed time-out.
    expect(slots.deferFor('silent')).toBeLessThanOrEqual(1.2 * 200);
    now = 4000;
    // Four seconds of silence: the third waiting one comes back in ≈ 3 × 4 s.
    expect(slots.deferFor('silent')).toBeGreaterThanOrEqual(0.8 * 2 * 4000);
    expect(slots.deferFor('silent')).toBeGreaterThanOrEqual(0.8 * 3 * 4000);
  });

  it('forgets the longest-known idle destinations past 10,000, so memory stays bounded', () => {
    const slots = slotsOf(1);
    slots.tryAcquire('first', false);
    slots.release('first', 20);
    for (let n = 0; n < 10_000; n++) {
      slots.tryAcquire(`d${n}`, false);
      slots.release(`d${n}`, 20);
    }
    // 'first' is forgotten: assumed stuck again, it is held to its limit of 1.
    expect(slots.tryAcquire('first', false)).toBe(true);
    expect(slots.tryAcquire('first', false)).toBe(false);
    // The newest is remembered as fast.
    expect(slots.tryAcquire('d9999', false)).toBe(true);
    expect(slots.tryAcquire('d9999', false)).toBe(true);
  });
});
