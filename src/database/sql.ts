import type { EntityManager } from '@mikro-orm/postgresql';

/** A connection or a transaction: what a repository function runs its raw statements on. */
export type Sql = Pick<ReturnType<EntityManager['getKnex']>, 'raw'>;
