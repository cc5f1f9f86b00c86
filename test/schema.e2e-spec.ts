import { Client } from 'pg';
import { prepareDatabase } from '../src/database/database-bootstrap';
import { dropDatabase, isolatedEnvironment } from './support/test-app';

describe("The migrated database's schema", () => {
  const { DATABASE_URL: databaseUrl } = isolatedEnvironment();
  let db: Client;

  beforeAll(async () => {
    await prepareDatabase(databaseUrl);
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await dropDatabase(databaseUrl);
  });

  // A row deleted from the referenced table makes PostgreSQL look up (and cascade to) the rows that refer
  // to it: without an index led by the referring columns, that is a scan of the whole referring table for
  // every row deleted (retention deletes events by the thousand). A partial index serves it only when its
  // predicate holds for every value looked up: `<column> IS NOT NULL` on a one-column key.
  it('indexes the columns of every foreign key, so that a delete never scans the referring table', async () => {
    const { rows } = await db.query<{ constraint: string }>(
      `select c.conrelid::regclass || ' (' || c.conname || ')' as constraint
       from pg_constraint c
       where c.contype = 'f' and c.connamespace = 'public'::regnamespace
         and not exists (
           select 1 from pg_index i
           where i.indrelid = c.conrelid
             and (i.indpred is null
                  or pg_get_expr(i.indpred, i.indrelid) = format('(%s IS NOT NULL)', (
                       select quote_ident(a.attname) from pg_attribute a
                       where a.attrelid = c.conrelid and a.attnum = c.conkey[1] and cardinality(c.conkey) = 1)))
             and (i.indkey::int2[])[0:cardinality(c.conkey) - 1] @> c.conkey
             and (i.indkey::int2[])[0:cardinality(c.conkey) - 1] <@ c.conkey
         )
       order by 1`,
    );
    expect(rows.map((row) => row.constraint)).toEqual([]);
  });
});
