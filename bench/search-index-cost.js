#!/usr/bin/env node
// What the search index for `q` costs PostgreSQL per event, by payload: rows of 20,000 bodies inserted in
// batches of 100 (as a status write marks them) into a table without an index, and into one with the
// events' trigram index (events_body_text_trgm_index: GIN, gin_trgm_ops, default settings); and the
// trigram extraction alone (pg_trgm's similarity() over each body). Two payloads: the benchmark's one 1 KB
// body (scenarios 1 and 2) and the 20,000 different bodies of scenario 3's four kinds (BENCH_BODIES=realistic).
// Makes a scratch database and drops it.
//   node bench/search-index-cost.js        (BENCH_POSTGRES_URL as for npm run bench)
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');
const { webhookBody } = require('./lib/load');
const { realisticBodiesSql } = require('./lib/seed');

const SERVER = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const ROWS = 20_000;
const BATCH = 100;

async function connect(database) {
  const client = new Client({ connectionString: `${SERVER}/${database}` });
  await client.connect();
  return client;
}

/** Milliseconds that `sql` takes. */
async function timed(db, sql, values) {
  const start = process.hrtime.bigint();
  await db.query(sql, values);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Inserts the payloads into a new table with `index` (or none), BATCH rows a statement: ms in all. */
async function insertAll(db, table, index) {
  await db.query(`create table ${table} (n serial, body_text text)`);
  if (index) await db.query(`create index on ${table} ${index}`);
  let ms = 0;
  for (let from = 0; from < ROWS; from += BATCH)
    ms += await timed(
      db,
      `insert into ${table} (body_text) select body_text from payloads where n > $1 and n <= $2`,
      [from, from + BATCH],
    );
  return ms;
}

async function measure(db, label) {
  const { rows } = await db.query(
    'select avg(array_length(show_trgm(body_text), 1))::int as trigrams from payloads',
  );
  const extraction = await timed(db, `select sum(similarity(body_text, 'abc')) from payloads`);
  const plain = await insertAll(db, `plain_${label}`);
  const indexed = await insertAll(db, `indexed_${label}`, 'using gin (body_text gin_trgm_ops)');
  const perRow = (ms) => `${Math.round((ms * 1000) / ROWS)} µs`;
  console.log(
    `${label}: ${rows[0].trigrams} trigrams a body; extraction ${perRow(extraction)} a body; ` +
      `insert ${perRow(plain)} a row without the index, ${perRow(indexed)} with it: ` +
      `the index ${perRow(indexed - plain)} a row`,
  );
}

async function main() {
  const database = `hooktrail_search_cost_${randomBytes(3).toString('hex')}`;
  const admin = await connect('postgres');
  await admin.query(`create database ${database}`);
  const db = await connect(database);
  try {
    await db.query('create extension pg_trgm');
    const payloads = {
      bench: `select n, $1::text as body_text from generate_series(1, ${ROWS}) n`,
      realistic: `select row_number() over ()::int as n, body_text from (${realisticBodiesSql(ROWS)}) bodies`,
    };
    for (const [label, sql] of Object.entries(payloads)) {
      await db.query('drop table if exists payloads');
      await db.query(`create table payloads as ${sql}`, label === 'bench' ? [webhookBody(1024)] : []);
      await db.query('create index on payloads (n)');
      await db.query('analyze payloads');
      await measure(db, label);
    }
  } finally {
    await db.end();
    await admin.query(`drop database ${database}`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
