import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PeriodicTask } from '../../common/periodic-task';
import { untilShort } from '../../common/until-short';

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
 * Marks a batch of the events captures queued (stored without a delivery). The queue's rows are taken by
 * their ctid (a TID scan, the table has no index). An event whose row another transaction holds (a
 * repeat's count, a delete) is skipped, not waited for, and its queue row stays for the next pass: waiting,
 * this statement would keep the rows it had already marked locked until that transaction ended, and a
 * writer that needed one of them next would wait for a transaction that need not be short (a test's, held
 * open while it wrote the next row, never ended). The other rows are dropped: their events are marked, or
 * already were, or are gone. Answers how many queue rows it dropped.
 */
export const QUEUED_BATCH_SQL = `
  with queued as (
    select ctid, event_id from search_queue limit ? for update skip locked
  ),
  marked as (
    update events set searchable = true
    where id = any(array(
      select id from events
      where id = any(array(select event_id from queued)) and not searchable
      for update skip locked))
    returning id
  ),
  held as (
    select id from events where id = any(array(select event_id from queued)) and not searchable
    except select id from marked
  ),
  taken as (
    delete from search_queue
    where ctid = any(array(select ctid from queued where event_id not in (select id from held)))
  )
  select count(*)::int as taken from queued where event_id not in (select id from held)`;

/**
 * Marks a batch of the events still unmarked STATUS_WAIT_SECONDS after their capture, through the unmarked
 * events' index (endpoint, capture time) only: `waiting` walks it from one endpoint to the next (each step
 * one descent of the index, a loose index scan), and each endpoint's stale events are a range of it. A
 * pass so reads the index entries of the endpoints with unmarked events and the rows of the events it
 * marks, however many events the table holds, how many endpoints there are, or how many younger events
 * wait for their status (read as one filter, the planner scanned the whole table: 31 ms at 40,000 events).
 * The events are then updated by their primary key (`= any(array(...))`), whatever the table's size.
 */
export const STALE_BATCH_SQL = `
  with recursive waiting(endpoint_id) as (
    (select endpoint_id from events where not searchable order by endpoint_id limit 1)
    union all
    select (select e.endpoint_id from events e
            where not e.searchable and e.endpoint_id > waiting.endpoint_id
            order by e.endpoint_id limit 1)
    from waiting where waiting.endpoint_id is not null
  )
  update events set searchable = true
  where id = any(array(
    select stale.id from waiting
    cross join lateral (
      select id from events
      where endpoint_id = waiting.endpoint_id and not searchable
        and received_at < now() - make_interval(secs => ?)
      limit ? for update skip locked) stale
    limit ?))`;

/**
 * Puts captured events into the trigram index for `q`, in batches, off the capture path (a worker:
 * APP_ROLE `worker`, or the delivery thread of `all`). A capture stores its event unmarked, which costs
 * one small btree entry instead of the trigrams of its whole body. An event with deliveries is left to
 * the first change of its status, which marks it in the same write (event-status.ts), for up to
 * STATUS_WAIT_SECONDS: indexed here first, its row would go into the trigram index twice, since the status
 * write makes a new version of it (the status is indexed, so the update cannot be HOT). An event without
 * any is queued by its capture statement (`search_queue`). Every second this marks the queued events and
 * those past STATUS_WAIT_SECONDS, batch after batch until none is left. Until it is marked, `q` finds the
 * event through that btree (eventFilterSql), so a search never misses a stored event. Workers side by
 * side take different rows (SKIP LOCKED), and a delivery updating an event's status never waits for more
 * than one batch.
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

  /** Marks the queued events, then the stale ones, a batch at a time. */
  private async indexAll(): Promise<void> {
    const knex = this.em.getKnex();
    await untilShort(
      SEARCH_INDEX_BATCH,
      async () => (await knex.raw(QUEUED_BATCH_SQL, [SEARCH_INDEX_BATCH])).rows[0].taken,
    );
    await untilShort(
      SEARCH_INDEX_BATCH,
      async () =>
        (await knex.raw(STALE_BATCH_SQL, [STATUS_WAIT_SECONDS, SEARCH_INDEX_BATCH, SEARCH_INDEX_BATCH]))
          .rowCount,
    );
  }
}
