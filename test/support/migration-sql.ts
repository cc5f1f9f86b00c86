// A migration's statements, for tests that take one back and make it again on their own database.
import type { Migration } from '@mikro-orm/migrations';
import { EntityManager } from '@mikro-orm/postgresql';
import type { TestApp } from './test-app';

/** The SQL that one step of a migration runs, as MikroORM's migrator would run it. */
export async function migrationSql(
  sut: TestApp,
  Step: new (...args: ConstructorParameters<typeof Migration>) => Migration,
  step: 'up' | 'down',
): Promise<string[]> {
  const em = sut.app.get(EntityManager);
  const migration = new Step(em.getDriver(), em.config);
  await migration[step]();
  return migration.getQueries().map((query) => (typeof query === 'string' ? query : query.toQuery()));
}
