import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { DeliveryAttempt, DeliveryStatus } from '../model/delivery.entity';
import type { FilterRule } from '../ingest/filter';
import { ENFORCES_VERIFICATION } from '../ingest/routing';
import { countEventsInRange } from './event-range-count';
import type { EventStatus, VerificationStatus } from '../model/event.entity';
import { isoColumn as iso } from '../database/iso-column';

export interface EventRow {
  id: string;
  endpoint_id: string;
  status: EventStatus;
  method: string;
  headers: Record<string, string | string[]>;
  query: string;
  body_text: string | null;
  body_bytes: Buffer | null;
  source_ip: string | null;
  /** ISO 8601 UTC, formatted by PostgreSQL. */
  received_at: string;
  verification_status: VerificationStatus;
  verification_reason: string | null;
  duplicate_count: number;
  /** In a listed page: the body was longer than LISTED_BODY_LIMIT, and is cut to it. */
  body_truncated?: boolean;
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  destination_id: string | null;
  destination_url: string;
  status: DeliveryStatus;
  attempt_count: number;
  response_code: number | null;
  response_body: string | null;
  attempts: DeliveryAttempt[];
  last_attempted_at: string | null;
  created_at: string;
}

export interface EventFilters {
  status?: EventStatus;
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to?: Date;
  /** Case-insensitive substring of the text body. */
  q?: string;
  verification?: VerificationStatus;
}

/** An event's repeats as the API reads them: those a worker added, and those it has not added yet. */
export const DUPLICATE_COUNT = `duplicate_count +
  coalesce((select sum(r.repeats) from event_repeats r where r.event_id = id), 0)::int as duplicate_count`;

const EVENT_COLUMNS = `id, endpoint_id, status, method, headers, query, body_text, body_bytes, source_ip,
  ${iso('received_at')} as received_at, verification_status, verification_reason, ${DUPLICATE_COUNT}`;

/**
 * A body in a listed page is cut to this many characters (bytes for a binary body), so that a page of
 * 100 events with bodies of megabytes never sits whole in memory; the event's own route returns it whole.
 */
const LISTED_BODY_LIMIT = 65_536;

const LISTED_EVENT_COLUMNS = `id, endpoint_id, status, method, headers, query,
  left(body_text, ${LISTED_BODY_LIMIT}) as body_text, substring(body_bytes from 1 for ${LISTED_BODY_LIMIT}) as body_bytes,
  coalesce(length(body_text), length(body_bytes)) > ${LISTED_BODY_LIMIT} as body_truncated,
  source_ip, ${iso('received_at')} as received_at, verification_status, verification_reason, ${DUPLICATE_COUNT}`;

const DELIVERY_COLUMNS = `id, event_id, destination_id, destination_url, status, attempt_count, response_code,
  response_body, attempts, ${iso('last_attempted_at')} as last_attempted_at, ${iso('created_at')} as created_at`;

/** With `q`, matches are counted up to this many (see listPage). */
export const SEARCH_COUNT_CAP = 1000;

/** `%`, `_` and `\` match themselves inside an ILIKE pattern. */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/**
 * The SQL condition (and its bindings) on `events` of an endpoint's events that match `filters`: the events
 * list's, and a bulk replay's.
 */
export function eventFilterSql(
  endpointId: string,
  filters: EventFilters,
): { sql: string; bindings: unknown[] } {
  const conditions = ['endpoint_id = ?'];
  const bindings: unknown[] = [endpointId];
  if (filters.status !== undefined) {
    conditions.push('status = ?');
    bindings.push(filters.status);
  }
  if (filters.verification !== undefined) {
    conditions.push('verification_status = ?');
    bindings.push(filters.verification);
  }
  if (filters.from !== undefined) {
    conditions.push('received_at >= ?');
    bindings.push(filters.from.toISOString());
  }
  if (filters.to !== undefined) {
    conditions.push('received_at < ?');
    bindings.push(filters.to.toISOString());
  }
  if (filters.q !== undefined) {
    const search = searchSql(filters.q);
    conditions.push(search.sql);
    bindings.push(...search.bindings);
  }
  return { sql: conditions.join(' and '), bindings };
}

/**
 * The condition on `events` of `q`: a case-insensitive substring of the text body. The same test in two
 * arms, so that PostgreSQL can serve it from two indexes (a BitmapOr): the trigram index of the events the
 * search indexer has marked, and the small btree of those captured since, which a new event is found
 * through at once.
 */
export function searchSql(q: string): { sql: string; bindings: unknown[] } {
  return {
    sql: '((searchable and body_text ilike ?) or (not searchable and body_text ilike ?))',
    bindings: [likeContains(q), likeContains(q)],
  };
}

/**
 * Reads of captured events and their deliveries, by endpoint (whose owner the service has checked).
 * Plain SQL shaped for the indexes: (endpoint_id, received_at desc, id desc), the same with status,
 * and for `q` the pg_trgm GIN index on body_text of searchable events with the btree of the others.
 */
@Injectable()
export class EventsRepository {
  constructor(private readonly em: EntityManager) {}

  private async rows<T>(sql: string, bindings: unknown[]): Promise<T[]> {
    const result = await this.em.getKnex().raw(sql, bindings as never[]);
    return result.rows as T[];
  }

  /**
   * One page, newest first (received_at, then id, descending), its bodies cut to LISTED_BODY_LIMIT, and
   * the number of matching events.
   * Without `q` the count is exact. A substring search cannot be counted from an index, so with `q` it
   * counts at most SEARCH_COUNT_CAP matches (`capped` says the real number is larger): a common word
   * among a million events stays fast.
   */
  async listPage(
    endpointId: string,
    filters: EventFilters,
    page: number,
    limit: number,
  ): Promise<{ rows: EventRow[]; total: number; capped: boolean }> {
    const where = eventFilterSql(endpointId, filters);
    const [rows, total] = await Promise.all([
      this.rows<EventRow>(
        // The page is picked first and its bodies cut after: cut in the same select, every row that the
        // offset skips would be read and measured too.
        `select ${LISTED_EVENT_COLUMNS} from (
           select id, endpoint_id, status, method, headers, query, body_text, body_bytes, source_ip, received_at,
                  verification_status, verification_reason, duplicate_count
           from events where ${where.sql}
           order by events.received_at desc, events.id desc limit ? offset ?
         ) page order by received_at desc, id desc`,
        [...where.bindings, limit, (page - 1) * limit],
      ),
      this.count(endpointId, filters, where),
    ]);
    const capped = filters.q !== undefined && total > SEARCH_COUNT_CAP;
    return { rows, total: capped ? SEARCH_COUNT_CAP : total, capped };
  }

  /**
   * The endpoint's events, or those of one status, in a time range or all: exact, from the statistics
   * counters and the index at the range's ends (countEventsInRange; all of them: the day rows alone). With
   * a verification status: counted from the index. With `q`: at most SEARCH_COUNT_CAP + 1.
   */
  private async count(
    endpointId: string,
    filters: EventFilters,
    where: { sql: string; bindings: unknown[] },
  ): Promise<number> {
    if (filters.q === undefined && filters.verification === undefined)
      return countEventsInRange(this.em.getKnex(), endpointId, filters);
    const [{ total }] =
      filters.q === undefined
        ? await this.rows<{ total: number }>(
            `select count(*)::int as total from events where ${where.sql}`,
            where.bindings,
          )
        : await this.rows<{ total: number }>(
            `select count(*)::int as total from (select 1 from events where ${where.sql} limit ?) matched`,
            [...where.bindings, SEARCH_COUNT_CAP + 1],
          );
    return total;
  }

  async findInEndpoint(endpointId: string, eventId: string): Promise<EventRow | null> {
    const [row] = await this.rows<EventRow>(
      `select ${EVENT_COLUMNS} from events where id = ? and endpoint_id = ?`,
      [eventId, endpointId],
    );
    return row ?? null;
  }

  async existsInEndpoint(endpointId: string, eventId: string): Promise<boolean> {
    const rows = await this.rows(`select 1 from events where id = ? and endpoint_id = ?`, [
      eventId,
      endpointId,
    ]);
    return rows.length > 0;
  }

  /** Newest first. */
  listDeliveries(eventId: string): Promise<DeliveryRow[]> {
    return this.rows<DeliveryRow>(
      `select ${DELIVERY_COLUMNS} from deliveries where event_id = ? order by created_at desc, id desc`,
      [eventId],
    );
  }

  /** The endpoint's destinations with their filters, oldest first. */
  listRoutes(
    endpointId: string,
  ): Promise<{ id: string; url: string; is_active: boolean; filter: FilterRule | null }[]> {
    return this.rows(
      `select id, url, is_active, filter from destinations where endpoint_id = ? order by created_at, id`,
      [endpointId],
    );
  }

  /** Whether the endpoint enforces its verification (a capture that fails it is not forwarded). */
  async enforcesVerification(endpointId: string): Promise<boolean> {
    const rows = await this.rows<{ enforced: boolean }>(
      `select ${ENFORCES_VERIFICATION} as enforced from endpoints ep where ep.id = ?`,
      [endpointId],
    );
    return rows[0]?.enforced ?? false;
  }
}
