import type { FailureKind } from '../outbound/delivery-sender';

/** One recorded attempt, as issues and auto-pause see it. */
export interface TrackedAttempt {
  destinationId: string;
  endpointId: string;
  eventId: string;
  at: Date;
  /** 2xx: the destination delivers again. */
  succeeded: boolean;
  /** Its failure; null for a success, and for a delivery closed without an attempt (not the destination's fault). */
  failure: { kind: FailureKind; summary: string } | null;
}

/** A destination's attempts of one batch, in the order they were made. */
export interface DestinationAttempts {
  destinationId: string;
  /**
   * When its last success of the batch started; null when it did not deliver. It delivered: its unresolved
   * issues resolve, its failure count starts again.
   */
  succeededAt: Date | null;
  /** The failures before its last success in the batch: counted into issues that this success resolves. */
  resolvedFailures: TrackedAttempt[];
  /** The failures after its last success in the batch (all of them, when it did not deliver). */
  failures: TrackedAttempt[];
}

/** Each destination's attempts of the batch: its last success, and the failures before and after it. */
export function byDestination(attempts: readonly TrackedAttempt[]): DestinationAttempts[] {
  const groups = new Map<string, DestinationAttempts>();
  const ordered = [...attempts].sort((a, b) => a.at.getTime() - b.at.getTime());
  for (const attempt of ordered) {
    if (!attempt.succeeded && !attempt.failure) continue;
    let group = groups.get(attempt.destinationId);
    if (!group) {
      group = { destinationId: attempt.destinationId, succeededAt: null, resolvedFailures: [], failures: [] };
      groups.set(attempt.destinationId, group);
    }
    if (attempt.succeeded) {
      group.succeededAt = attempt.at;
      group.resolvedFailures.push(...group.failures);
      group.failures = [];
    } else {
      group.failures.push(attempt);
    }
  }
  return [...groups.values()].sort((a, b) => (a.destinationId < b.destinationId ? -1 : 1));
}
