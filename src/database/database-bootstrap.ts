import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { StartupError } from '../common/startup-error';
import { migrationOptions } from './migration-options';

const CONNECT_TIMEOUT_MS = 5000;
/** Any fixed number: the advisory lock that lets one process at a time run migrations. */
const MIGRATION_LOCK_KEY = 7_340_233;

function describeAddress(url: URL): string {
  return `${url.hostname || '127.0.0.1'}:${url.port || 5432}`;
}

async function connect(url: URL): Promise<Client> {
  const client = new Client({
    connectionString: url.toString(),
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Creates the database named in the URL when it is missing. */
async function ensureDatabaseExists(databaseUrl: string): Promise<void> {
  const target = new URL(databaseUrl);
  const name = decodeURIComponent(target.pathname.slice(1));
  const maintenance = new URL(databaseUrl);
  maintenance.pathname = '/postgres';
  let client: Client;
  try {
    client = await connect(maintenance);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new StartupError(
      `PostgreSQL is not reachable at ${describeAddress(target)} (${reason}). ` +
        'Start it or set DATABASE_URL (README, "Run it").',
    );
  }
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      await client
        .query(`create database "${name.replace(/"/g, '""')}"`)
        .catch((error: { code?: string }) => {
          if (error.code !== '42P04') throw error; // created meanwhile by another process
        });
    }
  } finally {
    await client.end();
  }
}

/** Applies the checked-in migrations, one process at a time. */
async function migrate(databaseUrl: string): Promise<void> {
  const lock = await connect(new URL(databaseUrl));
  const orm = await MikroORM.init(migrationOptions(databaseUrl));
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await orm.getMigrator().up();
  } finally {
    await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.end();
    await orm.close(true);
  }
}

export async function prepareDatabase(databaseUrl: string): Promise<void> {
  await ensureDatabaseExists(databaseUrl);
  await migrate(databaseUrl);
}
