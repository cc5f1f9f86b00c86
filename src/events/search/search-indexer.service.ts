import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PeriodicTask } from '../../common/periodic-task';

const INDEX_INTERVAL_MS = 1000;
/** Events marked per statement: one trigram index update and one commit for the lot. */
const SEARCH_INDEX_BATCH = 1000;

/**
 * Puts captured events into the trigram index for `q`, in batches, off the capture path (a worker:
 * APP_ROLE `worker`, or the delivery thread of `all`). A capture stores its event unmarked, which costs
 * one small btree entry instead of the trigrams of its whole body; every second this marks what was
 * captured since (`searchable`), batch after batch until none is left, unless a change of status marked
 * it first (event-status.ts). Until then `q` finds the event
 * through that btree (eventFilterSql), so a search never misses a stored event. Workers side by side
 * take different rows (SKIP LOCKED), and a delivery updating an event's status never waits for more than
 * one batch.
 */
@Injectable()
export class SearchIndexer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SearchIndexer.name);
  private readonly runs = new PeriodicTask(
    () => this.indexAll(),
    INDEX_INTERVAL_MS,
    (error) => this.logger.warn(`search indexing skipped: ${error.message}`),
  );

  constructor(private readonly em: EntityManager) {}

  onApplicationBootstrap(): void {
    this.runs.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.runs.stop();
  }

  /** Marks every unmarked event, a batch at a time. */
  private async indexAll(): Promise<void> {
    let marked: number;
    do marked = await this.indexBatch();
    while (marked === SEARCH_INDEX_BATCH);
  }

  private async indexBatch(): Promise<number> {
    const result = await this.em.getKnex().raw(
      `update events set searchable = true
       where id in (select id from events where not searchable limit ? for update skip locked)`,
      [SEARCH_INDEX_BATCH],
    );
    return result.rowCount as number;
  }
}
