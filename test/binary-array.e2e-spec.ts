import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { binaryArray, BOOL, BYTEA, INT4, TEXT, TIMESTAMPTZ, UUID } from '../src/database/binary-array';
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
      [binaryArray(TEXT, texts)],
    );
    expect(rows[0]).toEqual({ texts, nulls: 4, lengths: texts.length });
  });

  it('gives back bytea elements byte for byte, NULs and invalid UTF-8 included', async () => {
    const bytes = [Buffer.from([0x00, 0xc3, 0x28, 0xff]), null, Buffer.alloc(0), randomBytes(65_536)];
    const { rows } = await db.query<{ bytes: (Buffer | null)[] }>('select $1::bytea[] as bytes', [
      binaryArray(BYTEA, bytes),
    ]);
    expect(rows[0].bytes).toEqual(bytes);
  });

  it('sends a Buffer text element as its UTF-8 bytes', async () => {
    const texts = [Buffer.from('{"name":"Zoë 🙂"}'), Buffer.alloc(0), 'a string beside it'];
    const { rows } = await db.query<{ texts: string[] }>('select $1::text[] as texts', [
      binaryArray(TEXT, texts),
    ]);
    expect(rows[0].texts).toEqual(['{"name":"Zoë 🙂"}', '', 'a string beside it']);
  });

  it('gives back uuid, timestamptz, int and boolean elements as sent', async () => {
    const ids = [randomUUID(), null, '00000000-0000-4000-8000-00000000000A'];
    const times = [
      new Date('2026-11-30T20:05:06.789Z'),
      new Date('1999-12-31T23:59:59.999Z'),
      new Date('2000-01-01T00:00:00.000Z'),
      null,
      new Date('2200-06-01T12:00:00.001Z'),
    ];
    const numbers = [0, -1, 2_147_483_647, -2_147_483_648, null];
    const flags = [true, false, null];
    const { rows } = await db.query(
      `select $1::uuid[]::text[] as ids, $2::timestamptz[] as times, $3::int[] as numbers, $4::boolean[] as flags`,
      [
        binaryArray(UUID, ids),
        binaryArray(TIMESTAMPTZ, times),
        binaryArray(INT4, numbers),
        binaryArray(BOOL, flags),
      ],
    );
    expect(rows[0]).toEqual({
      ids: [ids[0], null, '00000000-0000-4000-8000-00000000000a'],
      times,
      numbers,
      flags,
    });
  });

  it('refuses a uuid that is not one before sending anything', () => {
    expect(() => binaryArray(UUID, ['not-a-uuid'])).toThrow('not a UUID: not-a-uuid');
  });

  it('is refused, not misread, as an array of another element type', async () => {
    await expect(db.query('select $1::int[]', [binaryArray(TEXT, ['1'])])).rejects.toThrow(
      /element type 25 \(text\) instead of expected 23/,
    );
  });
});
