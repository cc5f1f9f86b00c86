#!/usr/bin/env node
// What the search index for `q` costs PostgreSQL per event, by payload: rows of 20,000 bodies inserted in
// batches of 100 (as a status write marks them) into a table without an index, and into one with the
// events' trigram index (events_body_text_trgm_index: GIN, gin_trgm_ops, default settings); and the
// trigram extraction alone (pg_trgm's similarity() over each body). Two payloads: the benchmark's one 1 KB
// body (scenarios 1 and 2) and the 20,000 different bodies of scenario 3's four kinds (BENCH_BODIES=realistic).
// Then a design not built: the n-grams inside each body's ASCII words taken in Node, as integers, and
// kept as one int4[] row per chunk of events (the union of theirs) under a GIN index: Node's extraction
// a body, PostgreSQL's insert of the chunks an event, and how many chunks a search for an id that occurs
// in one body would recheck (those holding all of its keys), for each design of CHUNKS.
// Makes a scratch database and drops it.
//   node bench/search-index-cost.js        (BENCH_POSTGRES_URL as for npm run bench)
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');
const { webhookBody } = require('./lib/load');
const { realisticBodiesSql } = require('./lib/seed');

const SERVER = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const ROWS = 20_000;
const BATCH = 100;
/** The chunk designs measured: n-grams of `n` characters, chunks of `size` events. */
const CHUNKS = [
  { n: 3, size: 100 },
  { n: 3, size: 10 },
  { n: 4, size: 100 },
];

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

/**
 * The n-grams inside the words (runs of ASCII letters and digits) of the lower-cased text, each as the
 * number its n characters make in base 36.
 */
function innerGrams(text, n) {
  const keys = new Set();
  const modulus = 36 ** n;
  let length = 0;
  let code = 0;
  const lower = text.toLowerCase();
  for (let i = 0; i < lower.length; i++) {
    const c = lower.charCodeAt(i);
    const digit = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 122 ? c - 87 : -1;
    if (digit < 0) length = 0;
    else {
      code = (code * 36 + digit) % modulus;
      if (++length >= n) keys.add(code);
    }
  }
  return keys;
}

/**
 * Inserts the bodies' n-grams as chunks of `size` events into a new table with a GIN index. Answers the
 * ms of the inserts in all, the keys an event, Node's ms of extraction in all and the chunks' key sets.
 */
async function insertChunks(db, table, bodies, { n, size }) {
  await db.query(`create table ${table} (events int[], keys int4[])`);
  await db.query(`create index on ${table} using gin (keys)`);
  const chunks = [];
  let ms = 0;
  let extraction = 0n;
  for (let from = 0; from < bodies.length; from += size) {
    const started = process.hrtime.bigint();
    const union = new Set();
    for (const body of bodies.slice(from, from + size)) for (const key of innerGrams(body, n)) union.add(key);
    extraction += process.hrtime.bigint() - started;
    chunks.push(union);
    const events = Array.from({ length: Math.min(size, bodies.length - from) }, (_, i) => from + i + 1);
    ms += await timed(db, `insert into ${table} (events, keys) values ($1, $2)`, [events, [...union]]);
  }
  const keys = chunks.reduce((sum, chunk) => sum + chunk.size, 0) / bodies.length;
  return { ms, keys, extractionMs: Number(extraction) / 1e6, chunks };
}

/** Ids that occur in one body only (a Stripe customer, a Stripe event, a Git commit), where the payloads have them. */
function sampleIds(bodies) {
  const patterns = [
    /"customer":"(cus_[0-9a-f]{14})"/,
    /"id":"(evt_[0-9a-f]{24})"/,
    /"after":"([0-9a-f]{40})"/,
  ];
  return patterns
    .flatMap((pattern) => bodies.find((body) => pattern.test(body))?.match(pattern)?.[1] ?? [])
    .filter((id) => bodies.filter((body) => body.includes(id)).length === 1);
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
  const bodies = (await db.query('select body_text from payloads order by n')).rows.map(
    (row) => row.body_text,
  );
  const ids = sampleIds(bodies);
  for (const design of CHUNKS) {
    const { ms, keys, extractionMs, chunks } = await insertChunks(
      db,
      `chunks_${design.n}_${design.size}_${label}`,
      bodies,
      design,
    );
    // How many chunks a search for each id would recheck: those holding every one of its keys.
    const rechecked = ids.map((id) => {
      const wanted = [...innerGrams(id, design.n)];
      return chunks.filter((chunk) => wanted.every((key) => chunk.has(key))).length;
    });
    console.log(
      `${label}, ${design.n}-grams in chunks of ${design.size}: ${keys.toFixed(1)} keys an event; Node's ` +
        `extraction ${perRow(extractionMs)} a body; the chunks' insert ${perRow(ms)} an event` +
        (ids.length ? `; an id's search rechecks ${rechecked.join(' / ')} of ${chunks.length} chunks` : ''),
    );
  }
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
