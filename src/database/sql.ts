import type { EntityManager } from '@mikro-orm/postgresql';

/** The query builder of MikroORM's PostgreSQL driver, on which repositories run their raw SQL. */
export type Knex = ReturnType<EntityManager['getKnex']>;

/** A connection or a transaction: what a repository function runs its raw statements on. */
export type Sql = Pick<Knex, 'raw'>;

/**
 * A statement that each pooled connection parses and plans once, then keeps (a named prepared statement;
 * PostgreSQL keeps a generic plan once it costs no more than the custom ones): for the statements the
 * delivery worker runs for every batch: at low rates, parsing and planning them took three quarters as
 * much of PostgreSQL's time as running them (BENCHMARKS.md, session 27). Its text must never vary, and its
 * name must be its own.
 */
export interface PreparedStatement {
  name: string;
  text: string;
}

/** Runs a prepared statement with `?` bindings, as `raw` does. */
export function runPrepared<TResult = unknown>(
  sql: Sql,
  statement: PreparedStatement,
  bindings: readonly unknown[],
): Promise<TResult> {
  return sql.raw(statement.text, bindings as never).options({ name: statement.name }) as Promise<TResult>;
}
