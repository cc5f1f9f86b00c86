// Statements written with knex's `?` placeholders, run on a plain pg connection: their plans, and the
// repositories' functions on a connection a test chooses.
import type { Client } from 'pg';
import type { Sql } from '../../src/database/sql';
import { ROUTE_BATCH, ROUTE_BATCH_SQL } from '../../src/delivery/delivery-router.service';

/** A statement written with knex's `?` placeholders, in PostgreSQL's `$n`. */
function numbered(sql: string): string {
  let parameter = 0;
  return sql.replace(/\?/g, () => `$${++parameter}`);
}

/**
 * Makes the deliveries of every captured event still queued for routing, with the statement of a worker's
 * router (DeliveryRouter), for tests whose application runs no worker. Returns the new deliveries' ids.
 */
export async function routeQueued(db: Client): Promise<string[]> {
  const made: string[] = [];
  let taken: number;
  do {
    const { rows } = await db.query(numbered(ROUTE_BATCH_SQL), [ROUTE_BATCH]);
    made.push(...rows[0].delivery_ids);
    taken = rows[0].taken;
  } while (taken === ROUTE_BATCH);
  return made;
}

/** The text of PostgreSQL's plan for a statement written with knex's `?` placeholders. */
export async function queryPlan(db: Client, sql: string, bindings: unknown[]): Promise<string> {
  const { rows } = await db.query<{ 'QUERY PLAN': string }>(`explain ${numbered(sql)}`, bindings);
  return rows.map((row) => row['QUERY PLAN']).join('\n');
}

/**
 * The text of the generic plan of a statement written with knex's `?` placeholders of the given types: the
 * plan a pooled connection keeps for a prepared statement once it stops planning each run.
 */
export async function genericPlan(
  db: Client,
  sql: string,
  types: string[],
  values: string[],
): Promise<string> {
  await db.query(`prepare generic_plan_of(${types.join(', ')}) as ${numbered(sql)}`);
  try {
    await db.query('set plan_cache_mode = force_generic_plan');
    const { rows } = await db.query<{ 'QUERY PLAN': string }>(
      `explain execute generic_plan_of(${values.map((value) => `'${value}'`).join(', ')})`,
    );
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await db.query('reset plan_cache_mode');
    await db.query('deallocate generic_plan_of');
  }
}

/**
 * A pg connection as the repositories' functions take one (`Sql`): to run them on a chosen connection. As
 * with knex, a statement is sent when awaited, and `options({ name })` makes it a prepared statement.
 */
export function sqlOf(client: Client): Sql {
  const raw = (sql: string, bindings: unknown[], name?: string) => ({
    options: (options: { name: string }) => raw(sql, bindings, options.name),
    then: <T>(resolve: (result: unknown) => T, reject: (error: unknown) => T) =>
      client.query({ text: numbered(sql), values: bindings, name }).then(resolve, reject),
  });
  return { raw } as unknown as Sql;
}
