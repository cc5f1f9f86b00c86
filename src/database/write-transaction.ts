import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager, Knex } from '@mikro-orm/postgresql';

/** What the write transaction of the current call does once it has committed, in order. */
const afterCommitSteps = new AsyncLocalStorage<(() => Promise<void>)[]>();

/**
 * Runs `work` in one transaction (MikroORM's, held in async context: the entity manager's queries and
 * `sqlOf` join it), then, once it has committed, the steps `work` left to `afterCommit`. Rolled back when
 * `work` throws; the steps then never run.
 */
export async function inWriteTransaction<T>(em: EntityManager, work: () => Promise<T>): Promise<T> {
  const steps: (() => Promise<void>)[] = [];
  const result = await afterCommitSteps.run(steps, () => em.transactional(() => work()));
  for (const step of steps) await step();
  return result;
}

/**
 * Runs `step` once the write transaction of the call has committed; at once outside one. For what other
 * processes act on (Redis messages, Bull jobs, background work on the pool) and for network calls: before
 * the commit, they would see the rows as they were (or not find them), and a network call would hold the
 * transaction's connection and locks for its whole time-out. A step that throws makes the call's answer
 * an error, its write stays committed.
 */
export async function afterCommit(step: () => Promise<void>): Promise<void> {
  const steps = afterCommitSteps.getStore();
  if (steps) steps.push(step);
  else await step();
}

/**
 * What a repository runs its raw SQL on: the transaction the call runs in (inWriteTransaction), else the
 * pool. A `transaction()` on it is a savepoint inside the call's transaction, or a transaction of its own.
 */
export function sqlOf(em: EntityManager): Knex {
  return em.getTransactionContext<Knex.Transaction>() ?? em.getKnex();
}
