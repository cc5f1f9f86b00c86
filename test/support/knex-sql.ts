// Statements written with knex's `?` placeholders, run on a plain pg connection: their plans, and the
// repositories' functions on a connection a test chooses.
import type { Client } from 'pg';
import type { Sql } from '../../src/database/sql';

/** A statement written with knex's `?` placeholders, in PostgreSQL's `$n`. */
function numbered(sql: string): string {
  let parameter = 0;
  return sql.replace(/\?/g, () => `$${++parameter}`);
}

/** The text of PostgreSQL's plan for a statement written with knex's `?` placeholders. */
export async function queryPlan(db: Client, sql: string, bindings: unknown[]): Promise<string> {
  const { rows } = await db.query<{ 'QUERY PLAN': string }>(`explain ${numbered(sql)}`, bindings);
  return rows.map((row) => row['QUERY PLAN']).join('\n');
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
