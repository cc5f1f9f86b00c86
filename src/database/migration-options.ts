import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { join } from 'node:path';
import { ormOptions } from './orm-options';

/** The ORM options with the checked-in migrations (the start's migration run and the MikroORM CLI). */
export function migrationOptions(databaseUrl: string): Options {
  const migrations = join(__dirname, 'migrations');
  return defineConfig({
    ...ormOptions(databaseUrl),
    extensions: [Migrator],
    migrations: {
      path: migrations,
      pathTs: migrations,
      glob: '!(*.d).{js,ts}',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
      emit: 'ts',
    },
  });
}
