import type { EntityManager } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { StartupError } from '../common/startup-error';
import type { Environment } from '../config/environment';
import { SecretBox } from './secret-box';

type Connection = ReturnType<EntityManager['getConnection']>;

/** Runs a statement without parameters (a pg client's or the ORM's) and answers its rows. */
export type Query = <T>(sql: string) => Promise<T[]>;

const GENERATED_KEY_SETTING = 'encryption_key';

/** The columns that hold sealed secrets. */
const SEALED_COLUMNS = [
  { table: 'destinations', column: 'secret' },
  { table: 'endpoints', column: 'verification_secret' },
  { table: 'endpoints', column: 'inbound_auth_secret' },
  { table: 'notification_channels', column: 'sealed_secret' },
] as const;

/** Outside production without ENCRYPTION_KEY: a key made once and kept in the database (every process shares it). */
export async function generatedEncryptionKey(connection: Connection): Promise<Buffer> {
  await connection.execute(
    `insert into app_settings (key, value) values (?, ?) on conflict (key) do nothing`,
    [GENERATED_KEY_SETTING, randomBytes(32).toString('base64')],
  );
  return (await storedGeneratedKey((sql) => connection.execute(sql))) as Buffer;
}

/** The generated key kept in the database, if there is one. */
export async function storedGeneratedKey(query: Query): Promise<Buffer | undefined> {
  const [row] = await query<{ value: string }>(
    `select value from app_settings where key = '${GENERATED_KEY_SETTING}'`,
  );
  return row ? Buffer.from(row.value, 'base64') : undefined;
}

/** The ids of the keys the stored secrets are sealed under. */
export async function sealedKeyIds(query: Query): Promise<string[]> {
  const ids = new Set<string>();
  for (const { table, column } of SEALED_COLUMNS) {
    const rows = await query<{ key_id: string }>(
      `select distinct split_part(${column}, '.', 2) as key_id from ${table} where ${column} like 'v1.%'`,
    );
    for (const row of rows) ids.add(row.key_id);
  }
  return [...ids];
}

/** Of the keys the stored secrets are sealed under, those that are not among `keyIds`. */
export async function missingKeyIds(query: Query, keyIds: readonly string[]): Promise<string[]> {
  return (await sealedKeyIds(query)).filter((keyId) => !keyIds.includes(keyId));
}

/**
 * Before the service starts: every stored secret must be sealed under ENCRYPTION_KEY (or, without it, the
 * generated key kept in the database) or ENCRYPTION_KEY_PREVIOUS; otherwise one line names the key missing.
 */
export async function checkStoredSecrets(env: Environment): Promise<void> {
  const client = new Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  try {
    const query: Query = async <T>(sql: string) => (await client.query(sql)).rows as T[];
    const current = env.ENCRYPTION_KEY
      ? Buffer.from(env.ENCRYPTION_KEY, 'base64')
      : await storedGeneratedKey(query);
    const previous = env.ENCRYPTION_KEY_PREVIOUS
      ? Buffer.from(env.ENCRYPTION_KEY_PREVIOUS, 'base64')
      : undefined;
    const keyIds = [current, previous].flatMap((key) => (key ? [SecretBox.keyId(key)] : []));
    const missing = await missingKeyIds(query, keyIds);
    if (missing.length > 0)
      throw new StartupError(
        `Stored secrets are sealed under key ${missing.join(', ')}, which is neither ENCRYPTION_KEY ` +
          `(${current ? SecretBox.keyId(current) : 'unset'}) nor ENCRYPTION_KEY_PREVIOUS: set the key they were ` +
          'sealed with (README, "Secrets at rest")',
      );
  } finally {
    await client.end();
  }
}

/**
 * Seals every stored secret that is not sealed under the box's current key: plain text (stored before
 * secrets were sealed) and, unless `plaintextOnly`, values sealed under the previous key (a rotation). Row by
 * row, each only if it is still what was read: an interrupted run leaves every value readable with both keys,
 * and running it again finishes it. Answers how many were sealed anew.
 */
export async function resealSecrets(
  connection: Connection,
  box: SecretBox,
  plaintextOnly = false,
): Promise<number> {
  let sealed = 0;
  for (const { table, column } of SEALED_COLUMNS) {
    const rows = await connection.execute<{ id: string; value: string }[]>(
      `select id, ${column} as value from ${table} where ${column} is not null and ${column} not like ?`,
      [plaintextOnly ? 'v1.%' : `v1.${box.currentKeyId}.%`],
    );
    for (const row of rows) {
      const plaintext = SecretBox.keyIdOf(row.value) === undefined ? row.value : box.open(row.value);
      const { affectedRows } = await connection.execute<{ affectedRows: number }>(
        `update ${table} set ${column} = ? where id = ? and ${column} = ?`,
        [box.seal(plaintext), row.id, row.value],
        'run',
      );
      sealed += affectedRows;
    }
  }
  return sealed;
}

/** Seals the secrets an earlier version stored in plain text. */
export function sealPlaintextSecrets(connection: Connection, box: SecretBox): Promise<number> {
  return resealSecrets(connection, box, true);
}
