import { Logger } from '@nestjs/common';
import { isUtf8 } from 'node:buffer';
import { Pool } from 'pg';

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
  /** The body as text when it is valid UTF-8 without NUL (bodyTextOf), null otherwise. */
  bodyText: string | null;
  sourceIp: string | null;
  receivedAt: Date;
}

export type StoreOutcome =
  | { kind: 'stored'; endpointId: string; deliveryIds: string[] }
  | { kind: 'unknown-endpoint' }
  | { kind: 'inactive-endpoint' };

/**
 * Stores a batch of captures in ONE statement (so one implicit transaction and one commit): the endpoints
 * are looked up by token, the events of active endpoints are inserted, and one `pending` delivery per
 * active destination of each event (the outbox the delivery sweeper drains). Every input row gets its
 * outcome back, in input order. Unknown and inactive endpoints are decided in the same round trip and
 * store nothing. An endpoint or destination deleted while the statement runs makes it fail on a foreign
 * key (23503); CaptureWriter then retries the rows one by one, and they see the deletion.
 */
const STORE_BATCH_SQL = `
with input as (
  select *
  from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::text[], $9::timestamptz[])
    with ordinality as t(id, token, method, headers, query, body_text, body_bytes, source_ip, received_at, position)
),
found as (
  select id, public_token, is_active from endpoints where public_token = any($2::text[])
),
matched as (
  select input.*, found.id as endpoint_id, found.is_active
  from input left join found on found.public_token = input.token
),
stored as (
  insert into events (id, endpoint_id, status, method, headers, query, body_text, body_bytes, source_ip, received_at)
  select id, endpoint_id, 'received', method, headers::jsonb, query, body_text, body_bytes, source_ip, received_at
  from matched where is_active
  returning id, endpoint_id
),
targets as (
  select id, endpoint_id, url from destinations
  where is_active and endpoint_id in (select id from found where is_active)
),
queued as (
  insert into deliveries (id, event_id, destination_id, destination_url, dispatch_id, status, next_attempt_at)
  select gen_random_uuid(), stored.id, targets.id, targets.url, stored.id, 'pending', now()
  from stored join targets on targets.endpoint_id = stored.endpoint_id
  returning id, event_id
)
select matched.position::int as position, matched.endpoint_id::text as endpoint_id, matched.is_active,
       coalesce(created.ids, '{}') as delivery_ids
from matched
left join (select event_id, array_agg(id::text) as ids from queued group by event_id) created on created.event_id = matched.id
order by matched.position`;

interface OutcomeRow {
  position: number;
  endpoint_id: string | null;
  is_active: boolean | null;
  delivery_ids: string[];
}

/**
 * The body as text when its bytes are valid UTF-8 without NUL (PostgreSQL text cannot hold it), stored in
 * `body_text`; null otherwise, and the bytes go to `body_bytes`.
 */
export function bodyTextOf(body: Buffer): string | null {
  return isUtf8(body) && body.indexOf(0) === -1 ? body.toString('utf8') : null;
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
   */
  constructor(databaseUrl: string, options: { poolSize: number; statementTimeoutMs: number }) {
    this.pool = new Pool({
      connectionString: databaseUrl,
      max: options.poolSize,
      connectionTimeoutMillis: options.statementTimeoutMs,
      idleTimeoutMillis: 30_000,
      statement_timeout: options.statementTimeoutMs,
      application_name: 'hooktrail-capture',
    });
    this.pool.on('error', (error) => this.logger.warn(`idle capture connection failed: ${error.message}`));
  }

  async storeBatch(captures: NewCapture[]): Promise<StoreOutcome[]> {
    const columns = {
      ids: [] as string[],
      tokens: [] as string[],
      methods: [] as string[],
      headers: [] as string[],
      queries: [] as string[],
      texts: [] as (string | null)[],
      bytes: [] as (Buffer | null)[],
      sourceIps: [] as (string | null)[],
      receivedAt: [] as string[],
    };
    for (const capture of captures) {
      columns.ids.push(capture.id);
      columns.tokens.push(capture.token);
      columns.methods.push(capture.method);
      columns.headers.push(JSON.stringify(capture.headers));
      columns.queries.push(capture.query);
      columns.texts.push(capture.bodyText);
      columns.bytes.push(capture.bodyText === null ? capture.body : null);
      columns.sourceIps.push(capture.sourceIp);
      columns.receivedAt.push(capture.receivedAt.toISOString());
    }
    const { rows } = await this.pool.query<OutcomeRow>({
      name: 'hooktrail-capture-batch',
      text: STORE_BATCH_SQL,
      values: [
        columns.ids,
        columns.tokens,
        columns.methods,
        columns.headers,
        columns.queries,
        columns.texts,
        columns.bytes,
        columns.sourceIps,
        columns.receivedAt,
      ],
    });
    return rows.map((row): StoreOutcome => {
      if (row.endpoint_id === null) return { kind: 'unknown-endpoint' };
      if (!row.is_active) return { kind: 'inactive-endpoint' };
      return { kind: 'stored', endpointId: row.endpoint_id, deliveryIds: row.delivery_ids };
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
