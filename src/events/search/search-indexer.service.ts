import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PeriodicTask } from '../../common/periodic-task';

const INDEX_INTERVAL_MS = 1000;
/** Events marked per statement: one trigram index update and one commit for the lot. */
const SEARCH_INDEX_BATCH = 1000;
/**
 * How long an event with deliveries is left for its first change of status to index it (event-status.ts):
 * a row rewritten after it was indexed puts all of its body's trigrams into the index again. A minute
 * covers a backlog drained within it, so that the indexer does not index beside the drain what the drain
 * is about to index again; an event still waiting after it (a paused or rate-limited destination) is
 * indexed by the indexer, which bounds the rows `q` reads without the trigram index.
 */
const STATUS_WAIT_SECONDS = 60;
/**
 * Events younger than this are checked for deliveries; older ones without any wait for STATUS_WAIT_SECONDS
 * (only a pass that fell this far behind leaves one so long), which bounds the rows checked per pass.
 */
const FRESH_SECONDS = 5;

/**
 * Marks a batch: events past STATUS_WAIT_SECONDS, and fresh ones without deliveries. Whether a fresh event
 * has a delivery is one index lookup per event (a scalar subquery, `limit 1`): written as `not exists`, the
 * planner ran it as a hashed subplan, a sequential scan of every delivery each pass, whenever the
 * deliveries fit in work_mem (12-41 ms a pass at 20,000 deliveries in the delivery benchmark).
 */
export const INDEX_BATCH_SQL = `
  update events set searchable = true
  where id in (
    select id from events e
    where not searchable
      and (received_at < now() - make_interval(secs => ?)
           or (received_at > now() - make_interval(secs => ?)
               and (select true from deliveries d where d.event_id = e.id limit 1) is null))
    limit ? for update skip locked)`;

/**
 * Puts captured events into the trigram index for `q`, in batches, off the capture path (a worker:
 * APP_ROLE `worker`, or the delivery thread of `all`). A capture stores its event unmarked, which costs
 * one small btree entry instead of the trigrams of its whole body; every second this marks what was
 * captured since (`searchable`), batch after batch until none is left. An event with deliveries is left to
 * the first change of its status, which marks it in the same write (event-status.ts), for up to
 * STATUS_WAIT_SECONDS: indexed here first, its row would go into the trigram index twice, since the status
 * write makes a new version of it (the status is indexed, so the update cannot be HOT). Until it is
 * marked, `q` finds the event through that btree (eventFilterSql), so a search never misses a stored
 * event. Workers side by side take different rows (SKIP LOCKED), and a delivery updating an event's status
 * never waits for more than one batch.
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
    const result = await this.em
      .getKnex()
      .raw(INDEX_BATCH_SQL, [STATUS_WAIT_SECONDS, FRESH_SECONDS, SEARCH_INDEX_BATCH]);
    return result.rowCount as number;
  }
}
