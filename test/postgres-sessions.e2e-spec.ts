import { MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import { ormOptions } from '../src/database/orm-options';
import { CaptureRepository } from '../src/events/capture/capture.repository';
import { POSTGRES_URL } from './support/test-app';

// No JIT compilation in the service's sessions: PostgreSQL would compile a short statement whose estimate
// passed jit_above_cost, at every execution (a table without statistics makes that estimate).
describe("The service's PostgreSQL sessions", () => {
  const databaseUrl = `${POSTGRES_URL}/postgres`;

  it("run the ORM's statements without JIT compilation", async () => {
    const orm = await MikroORM.init(ormOptions(databaseUrl));
    try {
      const rows: { jit: string }[] = await orm.em.getConnection().execute('show jit');
      expect(rows).toEqual([{ jit: 'off' }]);
    } finally {
      await orm.close(true);
    }
  });

  it("connect the ORM as DATABASE_URL's parameters say, as every other connection does (sslmode)", async () => {
    // This server speaks no TLS: a session that honours `sslmode=verify-full` cannot be opened on it.
    const orm = await MikroORM.init(ormOptions(`${databaseUrl}?sslmode=verify-full`));
    try {
      await expect(orm.em.getConnection().execute('select 1')).rejects.toThrow(
        'The server does not support SSL connections',
      );
    } finally {
      await orm.close(true);
    }
    const named = await MikroORM.init(ormOptions(`${databaseUrl}?application_name=from-url`));
    try {
      const rows: { name: string; jit: string }[] = await named.em
        .getConnection()
        .execute(`select current_setting('application_name') as name, current_setting('jit') as jit`);
      expect(rows).toEqual([{ name: 'from-url', jit: 'off' }]);
    } finally {
      await named.close(true);
    }
  });

  it("run the capture pool's statements without JIT compilation, with its own time-out and name", async () => {
    const repository = new CaptureRepository(databaseUrl, { poolSize: 1, statementTimeoutMs: 2500 });
    try {
      // The pool the capture statement runs on.
      const pool = (repository as unknown as { pool: Pool }).pool;
      const { rows } = await pool.query(
        `select current_setting('jit') as jit, current_setting('statement_timeout') as statement_timeout,
                current_setting('application_name') as application_name`,
      );
      expect(rows).toEqual([
        { jit: 'off', statement_timeout: '2500ms', application_name: 'hooktrail-capture' },
      ]);
    } finally {
      await repository.close();
    }
  });
});
