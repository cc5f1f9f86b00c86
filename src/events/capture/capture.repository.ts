import { Logger } from '@nestjs/common';
import { isUtf8 } from 'node:buffer';
import { Pool } from 'pg';
import { SESSION_OPTIONS } from '../../database/session-options';
import { binaryArray, BOOL, BYTEA, INT4, TEXT, TIMESTAMPTZ, UUID } from '../../database/binary-array';
import type { Verdict } from '../../ingest/capture-rules';
import type { FilterRule } from '../../ingest/filter';
import type { DedupSettings, InboundAuthSettings, VerificationSettings } from '../../ingest/ingest-rules';

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
  /** When the dedup key stops holding (with `verdict.dedupKey`). */
  dedupExpiresAt: Date | null;
}

export type StoreOutcome =
  | { kind: 'stored'; endpointId: string }
  | { kind: 'duplicate'; firstId: string }
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
 * Dedup: a row with a key claims it in `dedup_keys` (unique per endpoint) unless a live claim holds it; the
 * upsert returns the claim's event, so a repeat (in this batch or from another process, whose statement
 * waits on the key until the first commits) is answered with the first event's id and stores nothing. An
 * expired claim is taken over. Repeats of an event stored by the same statement are counted as it is
 * inserted; those of an earlier event go to `event_repeats` (this statement's snapshot may predate that
 * event's commit, and updating the event here would wait on its row on the capture path).
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
              $9::timestamptz[], $10::int[], $11::text[], $12::text[], $13::boolean[], $14::text[], $15::text[],
              $16::timestamptz[], $17::boolean[])
    with ordinality as t(id, token, method, headers, query, body_text, body_bytes, source_ip, received_at,
                         rules_version, verification_status, verification_reason, forward, skip, dedup_key,
                         dedup_expires_at, authorized, position)
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
                      received_at, verification_status, verification_reason, duplicate_count)`;
  const eventValues = `id, endpoint_id, 'received', method, headers::jsonb, query, body_text, body_bytes,
         source_ip, received_at, verification_status, verification_reason`;
  // One row of `routing_queue` per event with destinations, and one of `search_queue` per event without.
  const queueRoutes = (routes: string) => `,
routes as (
  select stored.id, array_agg(targets.id) as destination_ids
  from stored${routes}
  group by stored.id
),
queued as (
  insert into routing_queue (event_id, destination_ids) select id, destination_ids from routes
),
unrouted as (
  insert into search_queue (event_id) select id from stored except select id from routes
)`;
  const outcomes = (firstId: string, from: string) => `
select matched.position::int as position, matched.endpoint_id::text as endpoint_id, matched.is_active,
       matched.current_rules, matched.authorized, ${firstId} as first_id
from matched${from}
order by matched.position`;
  if (!routed)
    // Every accepted row is forwarded, and none has a dedup key.
    return `${input}
stored as (${insertEvents}
  select ${eventValues}, 0
  from matched where is_active and current_rules and authorized
  returning id, endpoint_id
)${queueRoutes('\n  join targets on targets.endpoint_id = stored.endpoint_id')}${outcomes('null::text', '')}`;
  return `${input}
accepted as (
  select id, endpoint_id, dedup_key, dedup_expires_at, position, forward, skip
  from matched where is_active and current_rules and authorized
),
claimed as (
  insert into dedup_keys (endpoint_id, key, event_id, expires_at)
  select distinct on (endpoint_id, dedup_key) endpoint_id, dedup_key, id, dedup_expires_at
  from accepted where dedup_key is not null
  order by endpoint_id, dedup_key, position
  on conflict (endpoint_id, key) do update set
    event_id = case when dedup_keys.expires_at <= now() then excluded.event_id else dedup_keys.event_id end,
    expires_at = case when dedup_keys.expires_at <= now() then excluded.expires_at else dedup_keys.expires_at end
  returning endpoint_id, key, event_id
),
judged as (
  select accepted.*, claimed.event_id as first_id
  from accepted left join claimed on claimed.endpoint_id = accepted.endpoint_id and claimed.key = accepted.dedup_key
),
repeats as (
  select first_id, count(*)::int as repeats from judged where first_id <> id group by first_id
),
noted as (
  -- Repeats of an event stored by an earlier statement, appended for a worker to add to its count.
  insert into event_repeats (event_id, repeats)
  select first_id, repeats from repeats where first_id not in (select id from judged where first_id = id)
),
stored as (${insertEvents}
  select ${eventValues}, coalesce(repeats.repeats, 0)
  from matched
  join judged using (id, endpoint_id)
  left join repeats on repeats.first_id = matched.id
  where judged.first_id is null or judged.first_id = matched.id
  returning id, endpoint_id
)${queueRoutes(`
  join judged on judged.id = stored.id
  join targets on targets.endpoint_id = stored.endpoint_id
  where judged.forward and (judged.skip is null or targets.id::text <> all(string_to_array(judged.skip, ' ')))`)}${outcomes('judged.first_id::text', '\nleft join judged on judged.id = matched.id')}`;
}

/**
 * The statement for a batch that routes (a dedup key, a filter that skips a destination, or a failed
 * enforced signature), and the leaner one for a batch that does not: most batches, and every batch of
 * endpoints without rules.
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
}

/**
 * Whether the body's bytes are valid UTF-8 without NUL (PostgreSQL text cannot hold it): then they are
 * stored in `body_text` as they are, otherwise in `body_bytes`.
 */
export function isStorableText(body: Buffer): boolean {
  return isUtf8(body) && body.indexOf(0) === -1;
}

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

  async storeBatch(captures: NewCapture[]): Promise<StoreOutcome[]> {
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
      dedupKeys: [] as (string | null)[],
      dedupExpiresAt: [] as (Date | null)[],
      authorized: [] as boolean[],
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
      columns.dedupKeys.push(verdict.dedupKey);
      columns.dedupExpiresAt.push(capture.dedupExpiresAt);
      columns.authorized.push(verdict.authorized);
    }
    const routed = captures.some(
      ({ verdict }) =>
        verdict.dedupKey !== null || verdict.skip.length > 0 || (verdict.authorized && !verdict.forward),
    );
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
        binaryArray(TEXT, columns.dedupKeys),
        binaryArray(TIMESTAMPTZ, columns.dedupExpiresAt),
        binaryArray(BOOL, columns.authorized),
      ],
    });
    const ids = columns.ids;
    return rows.map((row): StoreOutcome => {
      if (row.endpoint_id === null) return { kind: 'unknown-endpoint' };
      if (!row.is_active) return { kind: 'inactive-endpoint' };
      if (!row.current_rules) return { kind: 'stale-rules' };
      if (!row.authorized) return { kind: 'unauthorized' };
      if (row.first_id !== null && row.first_id !== ids[row.position - 1])
        return { kind: 'duplicate', firstId: row.first_id };
      return { kind: 'stored', endpointId: row.endpoint_id };
    });
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
