import { EntityManager } from '@mikro-orm/postgresql';
import {
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { PeriodicTask } from '../common/periodic-task';

const FOLD_INTERVAL_MS = 1000;

/**
 * The workers' part of dedup: every second, adds the repeats captures appended to `event_repeats` to their
 * events' `duplicate_count` (off the capture path, which never waits on an event's row for them). The keys'
 * claims are in Redis, and expire with their window (DedupClaims).
 */
@Injectable()
export class DedupWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DedupWorker.name);
  private readonly folds = new PeriodicTask(
    () => this.fold(),
    FOLD_INTERVAL_MS,
    (error) => this.logger.warn(`repeats not added to their events yet: ${error.message}`),
  );

  constructor(private readonly em: EntityManager) {}

  onApplicationBootstrap(): void {
    this.folds.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.folds.stop();
  }

  /**
   * Moves the appended repeats into `duplicate_count`, in one statement: the rows it deletes are the ones
   * it adds, so a repeat appended meanwhile waits for the next fold, and none is counted twice. The events
   * are locked in id order, as every writer of event statuses locks them (event-status.ts).
   */
  private async fold(): Promise<void> {
    await this.em.getKnex().raw(
      `with folded as (delete from event_repeats returning event_id, repeats),
            summed as (select event_id, sum(repeats)::int as repeats from folded group by event_id),
            locked as (select id from events where id in (select event_id from summed) order by id for update)
       update events set duplicate_count = duplicate_count + summed.repeats
       from summed where events.id = summed.event_id and events.id in (select id from locked)`,
    );
  }
}

/** What a worker runs for ingest rules: the fold of repeats. */
@Module({ providers: [DedupWorker] })
export class IngestWorkerModule {}
