/**
 * The SQL of the two functions that keep `endpoint_event_stats` (see Migration20261125020000_endpoint_stats):
 * `endpoint_event_stats_add` upserts per-minute deltas into the minute, hour and day rows of a shard, and
 * the statement trigger function `endpoint_event_stats_apply` computes them from the transition tables of
 * `events`. Shared by the migration that made them and the one that gave captures shards of their own.
 * `shard`: null for the first version (each backend writes shard `pg_backend_pid() % 8`); otherwise the
 * SQL, in the trigger function, of the shard it passes to `endpoint_event_stats_add` (which then takes it
 * as its first parameter, `p_shard`). `language`: `sql` in the first versions; `plpgsql` since
 * Migration20261129000000_event_stats_free_shards, because PostgreSQL 15 plans the body of a `sql` function
 * that it cannot inline (an insert) again at every call, and caches a `plpgsql` function's plans per session.
 * `updates`: how an UPDATE's rows become deltas (UPDATE_DELTAS).
 */

/** Inserts of events (captures) write shards 0 to 7; status changes and deletes (workers) 8 to 15. */
const FIRST_SHARD_OF_WRITER = `case when tg_op = 'INSERT' then 0 else 8 end`;

/** The writer's half, the shard of its backend in it. */
export const SHARD_BY_WRITER = `pg_backend_pid() % 8 + ${FIRST_SHARD_OF_WRITER}`;

/** The writer's half, a shard in it that no other transaction holds (`stats_free_shard`). */
export const FREE_SHARD_OF_WRITER = `stats_free_shard('endpoint_event_stats', ${FIRST_SHARD_OF_WRITER})`;

/**
 * The shard of a table of counters (`p_counters`) that a statement's transaction writes: the first of the
 * eight from `p_first` on, starting at the backend's own (pg_backend_pid() % 8), whose transaction-level
 * advisory lock it can take at once (one it already holds included); when every one is held, its own, and
 * it waits as before. The locks use the two-key form, whose keys never meet the one-key locks taken
 * elsewhere.
 */
export const STATS_FREE_SHARD_SQL = `create function "stats_free_shard"(p_counters text, p_first integer)
      returns integer language plpgsql as $$
        declare
          v_own integer := pg_backend_pid() % 8;
        begin
          for i in 0..7 loop
            if pg_try_advisory_xact_lock(hashtext(p_counters), p_first + (v_own + i) % 8) then
              return p_first + (v_own + i) % 8;
            end if;
          end loop;
          return p_first + v_own;
        end $$;`;

/** The per-minute deltas of some rows (+1 or -1 each); `netZero` keeps or leaves out minutes whose deltas sum to 0. */
const eventDeltas = (rows: string, netZero: 'kept' | 'left out' = 'kept') => `
  select array_agg(endpoint_id), array_agg(minute), array_agg(received), array_agg(delivered),
         array_agg(failed), array_agg(dead_letter)
  from (select endpoint_id, date_trunc('minute', received_at, 'UTC') as minute,
               coalesce(sum(delta) filter (where status = 'received'), 0)::integer as received,
               coalesce(sum(delta) filter (where status = 'delivered'), 0)::integer as delivered,
               coalesce(sum(delta) filter (where status = 'failed'), 0)::integer as failed,
               coalesce(sum(delta) filter (where status = 'dead_letter'), 0)::integer as dead_letter
        from (${rows}) changed group by 1, 2) grouped${
          netZero === 'kept' ? '' : `\n  where (received, delivered, failed, dead_letter) <> (0, 0, 0, 0)`
        }`;

/**
 * The deltas of an UPDATE statement's rows.
 * - `joined`: the rows whose status, capture time or endpoint changed, found by joining the transition
 *   tables on id. The first versions.
 * - `netted`: every new row +1 and every old row -1, with no join: a row whose status, capture time and
 *   endpoint stay the same adds and takes away 1 in the same minute and status, and minutes that net to
 *   zero are left out. Since Migration20261202000000_event_stats_netted_updates: plpgsql keeps a generic
 *   plan of the trigger's statement after a few calls, planned for transition tables of one row (a batch
 *   of one status change), and its nested loop then compared every new row with every old one: 4.4 ms for
 *   a batch of 175 status changes, against 0.66 ms hashed (BENCHMARKS.md, 2026-11-29).
 */
const UPDATE_DELTAS = {
  joined: eventDeltas(`
            select n.endpoint_id, n.received_at, n.status, 1 as delta
            from new_rows n join old_rows o on o.id = n.id
            where (n.status, n.received_at, n.endpoint_id) is distinct from (o.status, o.received_at, o.endpoint_id)
            union all
            select o.endpoint_id, o.received_at, o.status, -1
            from new_rows n join old_rows o on o.id = n.id
            where (n.status, n.received_at, n.endpoint_id) is distinct from (o.status, o.received_at, o.endpoint_id)`),
  netted: eventDeltas(
    `
            select endpoint_id, received_at, status, 1 as delta from new_rows
            union all
            select endpoint_id, received_at, status, -1 from old_rows`,
    'left out',
  ),
};

export const eventStatsAddSql = (
  shard: string | null,
  language: 'sql' | 'plpgsql' = 'sql',
): string => `create or replace function "endpoint_event_stats_add"(
        ${shard === null ? '' : 'p_shard integer, '}p_endpoints uuid[], p_minutes timestamptz[], p_received integer[], p_delivered integer[],
        p_failed integer[], p_dead_letter integer[]) returns void
      language ${language} as $$ ${language === 'plpgsql' ? 'begin' : ''}
        insert into endpoint_event_stats as s
          (endpoint_id, span, bucket_start, shard, received, delivered, failed, dead_letter)
        select c.endpoint_id, spans.span, date_trunc(spans.span, c.minute, 'UTC'), ${shard === null ? 'pg_backend_pid() % 8' : 'p_shard'},
               sum(c.received), sum(c.delivered), sum(c.failed), sum(c.dead_letter)
        from unnest(p_endpoints, p_minutes, p_received, p_delivered, p_failed, p_dead_letter)
          as c(endpoint_id, minute, received, delivered, failed, dead_letter)
        cross join (values ('minute'), ('hour'), ('day')) as spans(span)
        group by 1, 2, 3
        order by 1, 2, 3
        on conflict (endpoint_id, span, bucket_start, shard) do update set
          received = s.received + excluded.received, delivered = s.delivered + excluded.delivered,
          failed = s.failed + excluded.failed, dead_letter = s.dead_letter + excluded.dead_letter${language === 'plpgsql' ? '; end' : ''} $$;`;

export const eventStatsApplySql = (
  shard: string | null,
  updates: keyof typeof UPDATE_DELTAS = 'joined',
): string => `create or replace function "endpoint_event_stats_apply"() returns trigger language plpgsql as $$
      declare
        v_endpoints uuid[]; v_minutes timestamptz[]; v_received integer[]; v_delivered integer[];
        v_failed integer[]; v_dead_letter integer[];
      begin
        if tg_op = 'INSERT' then
          ${eventDeltas('select endpoint_id, received_at, status, 1 as delta from new_rows')}
          into v_endpoints, v_minutes, v_received, v_delivered, v_failed, v_dead_letter;
        elsif tg_op = 'UPDATE' then
          ${UPDATE_DELTAS[updates]}
          into v_endpoints, v_minutes, v_received, v_delivered, v_failed, v_dead_letter;
        else
          ${eventDeltas(`
            select endpoint_id, received_at, status, -1 as delta from old_rows
            where exists (select 1 from endpoints where endpoints.id = old_rows.endpoint_id)`)}
          into v_endpoints, v_minutes, v_received, v_delivered, v_failed, v_dead_letter;
        end if;
        if v_endpoints is not null then
          perform endpoint_event_stats_add(
            ${shard === null ? '' : `${shard}, `}v_endpoints, v_minutes, v_received, v_delivered, v_failed, v_dead_letter);
        end if;
        return null;
      end $$;`;
