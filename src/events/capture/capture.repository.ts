import { Logger } from '@nestjs/common';
import { isUtf8 } from 'node:buffer';
import { Pool } from 'pg';
import { SESSION_OPTIONS } from '../../database/session-options';
import { binaryArray, BOOL, BYTEA, INT4, TEXT, TIMESTAMPTZ, UUID } from '../../database/binary-array';
import type { Verdict } from '../../ingest/capture-rules';
import type { FilterRule } from '../../ingest/filter';
import type { DedupSettings, InboundAuthSettings, VerificationSettings } from '../../ingest/ingest-rules';
import { queueForSearch } from '../search/search-queue';
import { queueForRouting } from './routing-queue';

/** One captured request, ready to be stored. */
export interface NewCapture {
  /** The event id, made in the process (randomUUID). */
  id: string;
  token: string;
  method: string;
  /** Request headers as Node gives them (lower-case names). */
  headers: Record<string, string | string[] | undefined>;
  /** The raw query string without "?". */
  query: string;
  body: Buffer;
  /** The body is valid UTF-8 without NUL (isStorableText): stored in `body_text`, else in `body_bytes`. */
  bodyIsText: boolean;
  sourceIp: string | null;
  receivedAt: Date;
  /** The `rules_version` of the endpoint's rules it was judged by (0: an endpoint that never had any). */
  rulesVersion: number;
  verdict: Verdict;
  /**
   * With `verdict.dedupKey`: how long its claim holds, the claim it last found holding its key, and whether
   * to take that one over (DedupClaims' ClaimRequest); CaptureWriter claims the key before the batch is
   * stored.
   */
  dedup: { windowMs: number; heldBy: string | null; takeOver: boolean } | null;
}

export type StoreOutcome =
  | { kind: 'stored'; endpointId: string }
  | { kind: 'duplicate'; firstId: string }
  /** A repeat whose first event is not committed (yet, or ever: its claim may be stale). */
  | { kind: 'first-pending' }
  | { kind: 'stale-rules' }
  | { kind: 'unauthorized' }
  | { kind: 'unknown-endpoint' }
  | { kind: 'inactive-endpoint' };

/**
 * The statement that stores a batch of captures at once (so one implicit transaction and one commit): the
 * endpoints are looked up by token, the events of active endpoints are inserted, and each event that is
 * forwarded is queued in `routing_queue` with its destinations (the endpoint's active ones, but those its
 * filters skip), for a worker's router to make its deliveries (DeliveryRouter). Every input row gets its
 * outcome back, in input order. Unknown and inactive endpoints are decided in the same round trip and store
 * nothing; so does a capture judged by rules older than the endpoint's `rules_version` (the process reloads
 * them and judges it again), and one judged unauthorized (missing the inbound credential) comes here only
 * to have that version confirmed.
 *
 * Dedup: the keys are claimed in Redis before the batch comes here (DedupClaims), and a repeat comes with
 * the id of the first event, the claim's. A repeat stores nothing: it is counted, and answered as a
 * duplicate, once its first event is confirmed: stored by this statement (counted as it is inserted) or
 * committed before it (appended to `event_repeats`: updating the event here would wait on its row on the
 * capture path). A first event that neither is (its batch still in flight, or never stored) leaves the
 * repeat pending, to be sent again.
 *
 * An event stored with no destination to go to is queued in `search_queue` instead, for the search indexer
 * to mark soon; one with deliveries is marked by their first change of status (SearchIndexer).
 *
 * An endpoint deleted while the statement runs makes it fail on a foreign key (23503);
 * CaptureWriter then retries the rows one by one, and they see the deletion.
 */
function storeBatchSql(routed: boolean): string {
  const input = `
with input as (
  select *
  from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::text[],
              $9::timestamptz[], $10::int[], $11::text[], $12::text[], $13::boolean[], $14::text[], $15::uuid[],
              $16::boolean[], $17::text[])
    with ordinality as t(id, token, method, headers, query, body_text, body_bytes, source_ip, received_at,
                         rules_version, verification_status, verification_reason, forward, skip, first_id,
                         authorized, dedup_key, position)
),
found as (
  select id, public_token, is_active, rules_version from endpoints where public_token = any($2::text[])
),
matched as (
  select input.*, found.id as endpoint_id, found.is_active,
         found.rules_version is not distinct from input.rules_version as current_rules
  from input left join found on found.public_token = input.token
),
targets as (
  select id, endpoint_id from destinations
  where is_active and endpoint_id in (select id from found where is_active)
),`;
  const insertEvents = `
  insert into events (id, endpoint_id, status, method, headers, query, body_text, body_bytes, source_ip,
                      received_at, verification_status, verification_reason, dedup_key, duplicate_count)`;
  const eventValues = `id, endpoint_id, 'received', method, headers::jsonb, query, body_text, body_bytes,
         source_ip, received_at, verification_status, verification_reason, dedup_key`;
  // One row of `routing_queue` per event with destinations, and one of `search_queue` per event without.
  const queueRoutes = (routes: string) => `,
routes as (
  select stored.id, array_agg(targets.id) as destination_ids
  from stored${routes}
  group by stored.id
),
queued as (
  ${queueForRouting('routes')}
),
unrouted as (
  ${queueForSearch('select id from stored except select id from routes')}
)`;
  const outcomes = (first: string, from: string) => `
select matched.position::int as position, matched.endpoint_id::text as endpoint_id, matched.is_active,
       matched.current_rules, matched.authorized, ${first}
from matched${from}
order by matched.position`;
  if (!routed)
    // Every accepted row is forwarded, and none is a repeat.
    return `${input}
stored as (${insertEvents}
  select ${eventValues}, 0
  from matched where is_active and current_rules and authorized
  returning id, endpoint_id
)${queueRoutes('\n  join targets on targets.endpoint_id = stored.endpoint_id')}${outcomes(
      'null::text as first_id, false as first_found',
      '',
    )}`;
  return `${input}
accepted as (
  select id, endpoint_id, first_id, position, forward, skip
  from matched where is_active and current_rules and authorized
),
repeats as (
  select first_id, count(*)::int as repeats from accepted where first_id is not null group by first_id
),
earlier as (
  -- First events committed before this statement (not those it inserts: its snapshot predates them).
  select id from events where id in (select first_id from repeats)
),
noted as (
  -- Repeats of an event stored by an earlier statement, appended for a worker to add to its count.
  insert into event_repeats (event_id, repeats)
  select first_id, repeats from repeats where first_id in (select id from earlier)
),
stored as (${insertEvents}
  select ${eventValues}, coalesce(repeats.repeats, 0)
  from matched
  join accepted using (id, endpoint_id)
  left join repeats on repeats.first_id = matched.id
  where accepted.first_id is null
  returning id, endpoint_id
)${queueRoutes(`
  join accepted on accepted.id = stored.id
  join targets on targets.endpoint_id = stored.endpoint_id
  where accepted.forward and (accepted.skip is null or targets.id::text <> all(string_to_array(accepted.skip, ' ')))`)}${outcomes(
    `accepted.first_id::text as first_id,
       accepted.first_id in (select id from stored union all select id from earlier) as first_found`,
    '\nleft join accepted on accepted.id = matched.id',
  )}`;
}

/**
 * The statement for a batch that routes (a repeat, a filter that skips a destination, or a failed enforced
 * signature), and the leaner one for a batch that does not: most batches, and every batch of endpoints
 * without rules.
 */
const STORE_BATCH = {
  routed: { name: 'hooktrail-capture-batch-routed', text: storeBatchSql(true) },
  plain: { name: 'hooktrail-capture-batch', text: storeBatchSql(false) },
};

/** An endpoint's ingest rules as stored: secrets sealed, the filters of its active destinations. */
export interface RulesRow {
  rules_version: number;
  verification: VerificationSettings | null;
  verification_secret: string | null;
  inbound_auth: InboundAuthSettings | null;
  inbound_auth_secret: string | null;
  dedup: DedupSettings | null;
  filters: { destination_id: string; filter: FilterRule }[];
}

const LOAD_RULES_SQL = `
select rules_version, verification, verification_secret, inbound_auth, inbound_auth_secret, dedup,
       coalesce((select json_agg(json_build_object('destination_id', d.id, 'filter', d.filter) order by d.id)
                 from destinations d where d.endpoint_id = endpoints.id and d.is_active and d.filter is not null),
                '[]') as filters
from endpoints where public_token = $1`;

interface OutcomeRow {
  position: number;
  endpoint_id: string | null;
  is_active: boolean | null;
  current_rules: boolean;
  authorized: boolean;
  first_id: string | null;
  first_found: boolean | null;
}

/**
 * Whether the body's bytes are valid UTF-8 without NUL (PostgreSQL text cannot hold it): then they are
 * stored in `body_text` as they are, otherwise in `body_bytes`.
 */
export function isStorableText(body: Buffer): boolean {
  return isUtf8(body) && body.indexOf(0) === -1;
}

const FIND_DEDUP_EVENTS_SQL = `
select ask.position::int as position, event.id::text as id,
       (extract(epoch from event.received_at) * 1000)::bigint::text as received_at
from unnest($1::text[], $2::text[], $3::int[]) with ordinality as ask(token, key, window_ms, position)
join endpoints on endpoints.public_token = ask.token
cross join lateral (
  select id, received_at from events
  where events.endpoint_id = endpoints.id and events.dedup_key = ask.key
    and events.received_at > now() - make_interval(secs => ask.window_ms / 1000.0)
  order by received_at desc
  limit 1
) event`;

/**
 * The capture path's own connection pool and its one statement. Plain `pg`, no ORM unit of work:
 * this is the hot path. Each query is a single statement, so node-pg resolves it after the commit.
 */
export class CaptureRepository {
  private readonly logger = new Logger(CaptureRepository.name);
  private readonly pool: Pool;

  /**
   * `statementTimeoutMs` bounds both waiting for a connection and each statement in PostgreSQL: a batch
   * that cannot commit in that time fails (and is rolled back) instead of keeping its captures waiting.
   * Idle connections are kept (a quiet endpoint's next webhook should not pay a connection); one that
   * fails is dropped, and the next batch opens another.
   */
  constructor(databaseUrl: string, options: { poolSize: number; statementTimeoutMs: number }) {
    this.pool = new Pool({
      connectionString: databaseUrl,
      max: options.poolSize,
      connectionTimeoutMillis: options.statementTimeoutMs,
      idleTimeoutMillis: 0,
      statement_timeout: options.statementTimeoutMs,
      application_name: 'hooktrail-capture',
      options: SESSION_OPTIONS,
    });
    this.pool.on('error', (error) => this.logger.warn(`idle capture connection failed: ${error.message}`));
  }

  /**
   * Opens the pool's connections before the first capture, which would otherwise pay for one out of its
   * commit allowance (on one core here, the first batch of a burst of 200 took 100–134 ms with its new
   * connection, the others 4–60 ms). Never fails: a connection that cannot be opened now is opened by the
   * first batch that needs it.
   */
  async open(): Promise<void> {
    const opening = Array.from({ length: this.pool.options.max }, () => this.pool.connect());
    for (const result of await Promise.allSettled(opening)) {
      if (result.status === 'fulfilled') result.value.release();
      else
        this.logger.warn(`a capture connection could not be opened yet: ${(result.reason as Error).message}`);
    }
  }

  /**
   * Stores the batch; `firstIds` holds, for each capture that is a repeat, the id of its key's first event
   * (null for the others).
   */
  async storeBatch(captures: NewCapture[], firstIds: (string | null)[]): Promise<StoreOutcome[]> {
    const columns = {
      ids: [] as string[],
      tokens: [] as string[],
      methods: [] as string[],
      headers: [] as string[],
      queries: [] as string[],
      texts: [] as (Buffer | null)[],
      bytes: [] as (Buffer | null)[],
      sourceIps: [] as (string | null)[],
      receivedAt: [] as Date[],
      rulesVersions: [] as number[],
      verificationStatuses: [] as string[],
      verificationReasons: [] as (string | null)[],
      forward: [] as boolean[],
      skips: [] as (string | null)[],
      authorized: [] as boolean[],
      dedupKeys: [] as (string | null)[],
    };
    for (const capture of captures) {
      columns.ids.push(capture.id);
      columns.tokens.push(capture.token);
      columns.methods.push(capture.method);
      columns.headers.push(JSON.stringify(capture.headers));
      columns.queries.push(capture.query);
      // A refused capture is sent without its body: it is not stored.
      const kept = capture.verdict.authorized;
      columns.texts.push(kept && capture.bodyIsText ? capture.body : null);
      columns.bytes.push(kept && !capture.bodyIsText ? capture.body : null);
      columns.sourceIps.push(capture.sourceIp);
      columns.receivedAt.push(capture.receivedAt);
      const { verdict } = capture;
      columns.rulesVersions.push(capture.rulesVersion);
      columns.verificationStatuses.push(verdict.verification.status);
      columns.verificationReasons.push(verdict.verification.reason);
      columns.forward.push(verdict.forward);
      columns.skips.push(verdict.skip.length === 0 ? null : verdict.skip.join(' '));
      columns.authorized.push(verdict.authorized);
      columns.dedupKeys.push(capture.dedup === null ? null : verdict.dedupKey);
    }
    const routed =
      firstIds.some((firstId) => firstId !== null) ||
      captures.some(({ verdict }) => verdict.skip.length > 0 || (verdict.authorized && !verdict.forward));
    const statement = routed ? STORE_BATCH.routed : STORE_BATCH.plain;
    const { rows } = await this.pool.query<OutcomeRow>({
      ...statement,
      // Every column in PostgreSQL's binary array format: bodies (as received) and headers unescaped.
      values: [
        binaryArray(UUID, columns.ids),
        binaryArray(TEXT, columns.tokens),
        binaryArray(TEXT, columns.methods),
        binaryArray(TEXT, columns.headers),
        binaryArray(TEXT, columns.queries),
        binaryArray(TEXT, columns.texts),
        binaryArray(BYTEA, columns.bytes),
        binaryArray(TEXT, columns.sourceIps),
        binaryArray(TIMESTAMPTZ, columns.receivedAt),
        binaryArray(INT4, columns.rulesVersions),
        binaryArray(TEXT, columns.verificationStatuses),
        binaryArray(TEXT, columns.verificationReasons),
        binaryArray(BOOL, columns.forward),
        binaryArray(TEXT, columns.skips),
        binaryArray(UUID, firstIds),
        binaryArray(BOOL, columns.authorized),
        binaryArray(TEXT, columns.dedupKeys),
      ],
    });
    return rows.map((row): StoreOutcome => {
      if (row.endpoint_id === null) return { kind: 'unknown-endpoint' };
      if (!row.is_active) return { kind: 'inactive-endpoint' };
      if (!row.current_rules) return { kind: 'stale-rules' };
      if (!row.authorized) return { kind: 'unauthorized' };
      if (row.first_id !== null)
        return row.first_found ? { kind: 'duplicate', firstId: row.first_id } : { kind: 'first-pending' };
      return { kind: 'stored', endpointId: row.endpoint_id };
    });
  }

  /**
   * For each ask, the newest stored event of its endpoint that claimed its key within its window (its id and
   * capture time in epoch ms), or null: the claims Redis has lost (CaptureWriter). One index probe an ask
   * (`events_dedup_key_index`).
   */
  async findDedupEvents(
    asks: { token: string; key: string; windowMs: number }[],
  ): Promise<({ eventId: string; receivedAt: number } | null)[]> {
    const { rows } = await this.pool.query<{ position: number; id: string; received_at: string }>({
      name: 'hooktrail-capture-dedup-events',
      text: FIND_DEDUP_EVENTS_SQL,
      values: [asks.map((ask) => ask.token), asks.map((ask) => ask.key), asks.map((ask) => ask.windowMs)],
    });
    const found = new Map(rows.map((row) => [row.position, row]));
    return asks.map((_ask, index) => {
      const row = found.get(index + 1);
      return row === undefined ? null : { eventId: row.id, receivedAt: Number(row.received_at) };
    });
  }

  /**
   * The capture time (epoch ms) of the newest stored event that claimed a dedup key before `before`, 0 when
   * there is none. A scan of the dedup key index, once each time Redis lost its claims (CaptureWriter).
   */
  async lastDedupEventBefore(before: number): Promise<number> {
    const { rows } = await this.pool.query<{ at: string | null }>(
      `select (extract(epoch from max(received_at)) * 1000)::bigint::text as at
       from events where dedup_key is not null and received_at < to_timestamp($1::float8 / 1000)`,
      [before],
    );
    return Number(rows[0].at ?? 0);
  }

  /** The rules of the endpoint with this token as stored (secrets sealed), or undefined when there is none. */
  async loadRules(token: string): Promise<RulesRow | undefined> {
    const { rows } = await this.pool.query<RulesRow>({
      name: 'hooktrail-capture-rules',
      text: LOAD_RULES_SQL,
      values: [token],
    });
    return rows[0];
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
