#!/usr/bin/env node
// What the capture statement costs PostgreSQL, a batch and a capture: CaptureRepository.storeBatch (the
// production build's) on one connection, on an endpoint with two destinations, with batches of 5, 25 and 50
// captures of scenario 7's 1 KB Stripe body, "plain" (the statement of a batch without repeats, skips or
// refusals: most batches, scenario 7's too, whose dedup keys are claimed in Redis) and "routed" (each
// capture skipping one destination, as a filter that does not match it). The backend's CPU from /proc, over BATCHES a round; rounds alternate the variants, so
// that the machine's drift falls on each alike. The batch's fixed cost and a capture's follow from the
// sizes (a straight line through the smallest and the largest). The events table is seeded first
// (SEED_EVENTS, 200,000), as a run's scenario 1 leaves it before scenario 7. Makes a scratch database and
// drops it.
//   node bench/capture-batch-cost.js        (BENCH_POSTGRES_URL as for npm run bench; ROUNDS, BATCHES)
const { readFileSync } = require('node:fs');
const { randomBytes, randomUUID } = require('node:crypto');
const { Client } = require('pg');
const { prepareDatabase } = require('../dist/src/database/database-bootstrap');
const { CaptureRepository } = require('../dist/src/events/capture/capture.repository');
const { webhookBody } = require('./lib/load');

const SERVER = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const ROUNDS = Number(process.env.ROUNDS ?? 3);
/** Captures a variant stores in a round, at every batch size. */
const CAPTURES = Number(process.env.CAPTURES ?? 20_000);
const SIZES = [5, 25, 50];
const SEED_EVENTS = Number(process.env.SEED_EVENTS ?? 200_000);

/** The backend's CPU time from /proc, in µs (clock ticks of 10 ms: hence rounds of thousands of captures). */
function backendMicroseconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** A user, an endpoint with dedup on Stripe's event id, and two active destinations, written as the API would. */
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
  const { id } = endpoint.rows[0];
  for (const url of ['https://a.example.com/hooks', 'https://b.example.com/hooks'])
    await db.query(
      `insert into destinations (id, endpoint_id, url, created_at) values (gen_random_uuid(), $1, $2, now())`,
      [id, url],
    );
  // Each destination added moved the endpoint's rules_version on (a trigger): the captures carry the last.
  const { rows } = await db.query('select rules_version from endpoints where id = $1', [id]);
  await db.query(
    `insert into events (id, endpoint_id, status, method, headers, body_text, received_at)
     select gen_random_uuid(), $1, 'delivered', 'POST', '{}', $2, now() - make_interval(secs => g)
     from generate_series(1, $3) as g`,
    [id, webhookBody(1024), SEED_EVENTS],
  );
  await db.query('vacuum analyze');
  const destinations = await db.query('select id from destinations where endpoint_id = $1 order by id', [id]);
  return { token, rulesVersion: rows[0].rules_version, skipped: destinations.rows[0].id };
}

function batchOf(size, endpoint, routed) {
  const body = Buffer.from(webhookBody(1024));
  const headers = {
    host: '127.0.0.1',
    'content-type': 'application/json',
    'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=${randomBytes(32).toString('hex')}`,
  };
  const receivedAt = new Date();
  return Array.from({ length: size }, () => ({
    id: randomUUID(),
    token: endpoint.token,
    method: 'POST',
    headers,
    query: '',
    body,
    bodyIsText: true,
    sourceIp: '127.0.0.1',
    receivedAt,
    rulesVersion: endpoint.rulesVersion,
    verdict: {
      authorized: true,
      verification: { status: 'verified', reason: null },
      forward: true,
      dedupKey: null,
      skip: routed ? [endpoint.skipped] : [],
    },
    dedup: null,
  }));
}

async function main() {
  const database = `hooktrail_batch_cost_${Date.now().toString(36)}`;
  const url = `${SERVER}/${database}`;
  await prepareDatabase(url);
  const db = new Client({ connectionString: url });
  await db.connect();
  const repository = new CaptureRepository(url, { poolSize: 1, statementTimeoutMs: 60_000 });
  try {
    const endpoint = await setUp(db);
    await repository.open();
    const { rows } = await db.query(
      `select pid from pg_stat_activity where datname = $1 and application_name = 'hooktrail-capture'`,
      [database],
    );
    const pid = rows[0].pid;
    const perCapture = new Map();
    console.log(`${SEED_EVENTS} events seeded; ${CAPTURES} captures a variant and size a round`);
    for (let round = 1; round <= ROUNDS; round++)
      for (const variant of ['plain', 'routed'])
        for (const size of SIZES) {
          const before = backendMicroseconds(pid);
          for (let stored = 0; stored < CAPTURES; stored += size) {
            const batch = batchOf(size, endpoint, variant === 'routed');
            const outcomes = await repository.storeBatch(
              batch,
              batch.map(() => null),
            );
            if (outcomes.some((outcome) => outcome.kind !== 'stored'))
              throw new Error(`not stored: ${JSON.stringify(outcomes[0])}`);
          }
          const us = (backendMicroseconds(pid) - before) / CAPTURES;
          const key = `${variant} ${size}`;
          perCapture.set(key, [...(perCapture.get(key) ?? []), us]);
          console.log(
            `round ${round}, ${variant}, batches of ${size}: PostgreSQL ${us.toFixed(1)} µs a capture`,
          );
        }
    const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;
    for (const [key, values] of perCapture)
      console.log(
        `${key}: ${mean(values).toFixed(1)} µs a capture (${Math.min(...values).toFixed(1)} to ${Math.max(...values).toFixed(1)})`,
      );
    for (const variant of ['plain', 'routed']) {
      const [small, large] = [SIZES[0], SIZES.at(-1)];
      const batchUs = (size) => mean(perCapture.get(`${variant} ${size}`)) * size;
      const rowUs = (batchUs(large) - batchUs(small)) / (large - small);
      console.log(
        `${variant}: about ${Math.round(batchUs(small) - rowUs * small)} µs a batch and ${rowUs.toFixed(1)} µs a capture`,
      );
    }
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
  process.exit(1);
});
