#!/usr/bin/env node
// What a dedup look-up costs PostgreSQL, a batch and a key: CaptureRepository.findDedupEvents (the
// production build's) on one connection, the statement a batch runs for the keys Redis cannot vouch for
// (after a restart or failover, within a window of it, and while Redis is unavailable). Batches of 5, 25
// and 50 keys, half of them stored by an event within the window; the events table is seeded first
// (SEED_EVENTS, 200,000, every other one with a key, received over the last 20 hours). The backend's CPU from
// /proc, over LOOKUPS keys a size and round. Makes a scratch database and drops it.
//   node bench/dedup-lookup-cost.js        (BENCH_POSTGRES_URL as for npm run bench; ROUNDS, LOOKUPS)
const { readFileSync } = require('node:fs');
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');
const { prepareDatabase } = require('../dist/src/database/database-bootstrap');
const { CaptureRepository } = require('../dist/src/events/capture/capture.repository');

const SERVER = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const ROUNDS = Number(process.env.ROUNDS ?? 3);
/** Keys looked up a size and round. */
const LOOKUPS = Number(process.env.LOOKUPS ?? 20_000);
const SIZES = [5, 25, 50];
const SEED_EVENTS = Number(process.env.SEED_EVENTS ?? 200_000);
const WINDOW_MS = 86_400_000;

/** The backend's CPU time from /proc, in µs (clock ticks of 10 ms: hence rounds of thousands of keys). */
function backendMicroseconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** An endpoint with dedup, and its events: every other one with the key `evt_<n>`. Answers its token. */
async function setUp(db) {
  const user = await db.query(
    `insert into users (id, email, password_hash, name) values (gen_random_uuid(), $1, 'x', 'Bench') returning id`,
    [`bench-${randomBytes(4).toString('hex')}@example.com`],
  );
  const token = randomBytes(24).toString('base64url');
  const endpoint = await db.query(
    `insert into endpoints (id, user_id, name, public_token, dedup)
     values (gen_random_uuid(), $1, 'rules', $2, '{"key": "provider", "window_seconds": 86400}')
     returning id`,
    [user.rows[0].id, token],
  );
  await db.query(
    `insert into events (id, endpoint_id, status, method, headers, body_text, received_at, dedup_key)
     select gen_random_uuid(), $1, 'delivered', 'POST', '{}', '{}', now() - make_interval(secs => g * 72000.0 / $2),
            case when g % 2 = 0 then 'evt_' || g end
     from generate_series(1, $2) as g`,
    [endpoint.rows[0].id, SEED_EVENTS],
  );
  await db.query('vacuum analyze');
  return token;
}

async function main() {
  const database = `hooktrail_dedup_lookup_${Date.now().toString(36)}`;
  const url = `${SERVER}/${database}`;
  await prepareDatabase(url);
  const db = new Client({ connectionString: url });
  await db.connect();
  const repository = new CaptureRepository(url, { poolSize: 1, statementTimeoutMs: 60_000 });
  try {
    const token = await setUp(db);
    await repository.open();
    const { rows } = await db.query(
      `select pid from pg_stat_activity where datname = $1 and application_name = 'hooktrail-capture'`,
      [database],
    );
    const pid = rows[0].pid;
    let next = 0;
    // Half the keys stored (even numbers within the seed), half never seen.
    const batchOf = (size) =>
      Array.from({ length: size }, (_, index) => {
        next = next + 2 > SEED_EVENTS ? 2 : next + 2;
        return { token, key: index % 2 === 0 ? `evt_${next}` : `new_${next}`, windowMs: WINDOW_MS };
      });
    const perKey = new Map();
    console.log(`${SEED_EVENTS} events seeded; ${LOOKUPS} keys a size a round`);
    for (let round = 1; round <= ROUNDS; round++)
      for (const size of SIZES) {
        const before = backendMicroseconds(pid);
        for (let looked = 0; looked < LOOKUPS; looked += size) {
          const found = await repository.findDedupEvents(batchOf(size));
          if (found.filter((event) => event !== null).length !== Math.ceil(size / 2))
            throw new Error('a stored key was not found, or a new one was');
        }
        const us = (backendMicroseconds(pid) - before) / LOOKUPS;
        perKey.set(size, [...(perKey.get(size) ?? []), us]);
        console.log(`round ${round}, batches of ${size}: PostgreSQL ${us.toFixed(1)} µs a key`);
      }
    const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const [small, large] = [SIZES[0], SIZES.at(-1)];
    const batchUs = (size) => mean(perKey.get(size)) * size;
    const keyUs = (batchUs(large) - batchUs(small)) / (large - small);
    console.log(
      `about ${Math.round(batchUs(small) - keyUs * small)} µs a batch and ${keyUs.toFixed(1)} µs a key`,
    );
  } finally {
    await repository.close();
    await db.end();
    const admin = new Client({ connectionString: `${SERVER}/postgres` });
    await admin.connect();
    await admin.query(`drop database if exists "${database}" with (force)`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
