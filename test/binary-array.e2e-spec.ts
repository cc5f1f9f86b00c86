import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { binaryArray, BYTEA_OID, TEXT_OID } from '../src/database/binary-array';
import { POSTGRES_URL } from './support/test-app';

describe('binaryArray, read by PostgreSQL', () => {
  let db: Client;

  beforeAll(async () => {
    db = new Client({ connectionString: `${POSTGRES_URL}/postgres` });
    await db.connect();
  });
  afterAll(() => db.end());

  it('gives back every text element as sent: quotes, backslashes, braces, commas, non-ASCII, empty and null', async () => {
    const texts = [
      '{"a":"b\\"c","d":[1,2]}',
      'back\\slash and "quotes"',
      '',
      null,
      'NULL',
      'línea\nnueva\t🙂 日本',
      'x'.repeat(100_000),
    ];
    const { rows } = await db.query<{ texts: (string | null)[]; nulls: number; lengths: number }>(
      `select $1::text[] as texts, array_position($1::text[], null) as nulls,
              array_length($1::text[], 1) as lengths`,
      [binaryArray(TEXT_OID, texts)],
    );
    expect(rows[0]).toEqual({ texts, nulls: 4, lengths: texts.length });
  });

  it('gives back bytea elements byte for byte, NULs and invalid UTF-8 included', async () => {
    const bytes = [Buffer.from([0x00, 0xc3, 0x28, 0xff]), null, Buffer.alloc(0), randomBytes(65_536)];
    const { rows } = await db.query<{ bytes: (Buffer | null)[] }>('select $1::bytea[] as bytes', [
      binaryArray(BYTEA_OID, bytes),
    ]);
    expect(rows[0].bytes).toEqual(bytes);
  });

  it('is refused, not misread, as an array of another element type', async () => {
    await expect(db.query('select $1::int[]', [binaryArray(TEXT_OID, ['1'])])).rejects.toThrow(
      /element type 25 \(text\) instead of expected 23/,
    );
  });
});
