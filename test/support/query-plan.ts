import type { Client } from 'pg';

/** The text of PostgreSQL's plan for a statement written with knex's `?` placeholders. */
export async function queryPlan(db: Client, sql: string, bindings: unknown[]): Promise<string> {
  let parameter = 0;
  const { rows } = await db.query<{ 'QUERY PLAN': string }>(
    `explain ${sql.replace(/\?/g, () => `$${++parameter}`)}`,
    bindings,
  );
  return rows.map((row) => row['QUERY PLAN']).join('\n');
}
