import { Injectable, Logger } from '@nestjs/common';
import type { Knex } from '../database/sql';
import { Notifier } from '../notifications/notifier.service';
import { type AutoPausedDestination, trackDestinationHealth } from './destination-health';
import type { Issue } from './issue';
import { countFailures, countStaleFailures, resolveIssues } from './issue-counting';
import { issueNotifications } from './issue-notifications';
import { byDestination, type TrackedAttempt } from './tracked-attempts';

/** What a batch of attempts changed: issues opened and resolved, destinations paused, channels to wake. */
export interface TrackedChanges {
  opened: Issue[];
  resolved: Issue[];
  paused: AutoPausedDestination[];
  /** The notification channels whose outbox got a message in the transaction (to schedule once committed). */
  channelIds: string[];
}

/**
 * Issues and auto-pause, kept as attempts are recorded: inside the transaction that records a batch of
 * attempts, one statement keeps each destination's latest success and counts its consecutive failures
 * (pausing destinations that reached their `auto_pause_after`: destination-health.ts), then the failures
 * are counted into their issues (opening those not open yet) and the issues of the destinations that
 * delivered resolve (issue-counting.ts), and what changed is told (issue-notifications.ts). A failure
 * that started before its destination's latest recorded success is stale, its destination having
 * delivered since: it is counted into an issue, but opens none and does not count toward auto-pause (a
 * request that hung until its time-out, recorded after the recovered destination took later ones, neither
 * reopens the issue that recovery resolved nor pauses the destination). The notifications go into the
 * channels' outbox in the same transaction, so what was opened, resolved or paused is told exactly once,
 * even should the process stop right after the commit (the notifications' sweep schedules what `announce`
 * could not).
 */
@Injectable()
export class IssueTracker {
  private readonly logger = new Logger(IssueTracker.name);

  constructor(private readonly notifier: Notifier) {}

  async track(trx: Knex, attempts: readonly TrackedAttempt[]): Promise<TrackedChanges> {
    const destinations = byDestination(attempts);
    if (destinations.length === 0) return { opened: [], resolved: [], paused: [], channelIds: [] };
    const counted = destinations.flatMap((each) => each.failures);
    const before = destinations.flatMap((each) => each.resolvedFailures);
    const { paused, isStale } = await trackDestinationHealth(trx, destinations, before, counted);
    const isFresh = (failure: TrackedAttempt) => !isStale(failure);
    await countStaleFailures(trx, [...before, ...counted].filter(isStale));
    // Failures, then the success that resolves their issues, then the failures after it, in that order.
    const opened = await countFailures(trx, before.filter(isFresh));
    const resolved = await resolveIssues(
      trx,
      destinations
        .filter((destination) => destination.succeededAt !== null)
        .map((destination) => destination.destinationId),
    );
    opened.push(...(await countFailures(trx, counted.filter(isFresh))));
    const channelIds: string[] = [];
    for (const event of issueNotifications(opened, resolved, paused))
      channelIds.push(...(await this.notifier.record(trx, event)));
    return { opened, resolved, paused, channelIds };
  }

  /** Once the transaction has committed: schedules the channels' messages, and logs what changed. */
  async announce(changes: TrackedChanges): Promise<void> {
    for (const destination of changes.paused)
      this.logger.warn(
        { destinationId: destination.id, reason: destination.pausedReason },
        'destination paused itself',
      );
    if (changes.channelIds.length > 0) await this.notifier.dispatch(changes.channelIds);
  }
}
