#!/usr/bin/env node
// The capture batch's columns as node-pg's array literals against PostgreSQL's binary array format
// (src/database/binary-array.ts): CPU per capture of Node to serialize a batch's parameters, and of the
// PostgreSQL backend to read a 17-capture batch's ids, headers, bodies, times, numbers and flags (the mean
// batch of capture alone). "binary text" is the format of session 34 (text and bytea columns binary, the
// others literals); "binary" sends every column binary, bodies as their bytes.
// Needs the production build (`npx nest build`) and PostgreSQL (DATABASE_URL, default the local server).
//   node bench/capture-params.js
const { readFileSync } = require('node:fs');
const { Client } = require('pg');
const { serialize } = require('pg-protocol');
const { prepareValue } = require('pg/lib/utils');
const { randomUUID } = require('node:crypto');
const {
  binaryArray,
  BOOL,
  BYTEA,
  INT4,
  TEXT,
  TIMESTAMPTZ,
  UUID,
} = require('../dist/src/database/binary-array');

const BATCH = 17;
const metadata = Object.fromEntries(
  Array.from({ length: 25 }, (_, n) => [`key${n}`, `value ${n}, "quoted" \\`]),
);
const body = JSON.stringify({
  type: 'payment_intent.succeeded',
  data: { object: { amount: 1000, metadata } },
});
const headers = JSON.stringify({
  host: '127.0.0.1:3000',
  'content-type': 'application/json',
  'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
  'stripe-signature': `t=1700000000,v1=${'a'.repeat(64)}`,
});
const column = (value) => Array(BATCH).fill(value);
const bodyBytes = Buffer.from(body);
const textColumns = (bodies) => [
  column('tok_0123456789abcdefghijklmnopqrst'),
  column('POST'),
  column(headers),
  column(bodies),
];
// What a capture makes anew for each batch: its id and its time.
const ids = () => Array.from({ length: BATCH }, () => randomUUID());
const times = () => column(new Date());
const formats = {
  'array literal': () => [
    ids(),
    ...textColumns(body),
    column(null),
    times().map((time) => time.toISOString()),
    column(0),
    column(true),
  ],
  'binary text': () => [
    ids(),
    ...textColumns(body).map((values) => binaryArray(TEXT, values)),
    binaryArray(BYTEA, column(null)),
    times().map((time) => time.toISOString()),
    column(0),
    column(true),
  ],
  binary: () => [
    binaryArray(UUID, ids()),
    ...textColumns(bodyBytes).map((values) => binaryArray(TEXT, values)),
    binaryArray(BYTEA, column(null)),
    binaryArray(TIMESTAMPTZ, times()),
    binaryArray(INT4, column(0)),
    binaryArray(BOOL, column(true)),
  ],
};

function nodeMicroseconds(values, iterations) {
  const started = process.cpuUsage();
  for (let n = 0; n < iterations; n++)
    serialize.bind({ statement: 's', values: values(), valueMapper: (v) => prepareValue(v) });
  const used = process.cpuUsage(started);
  return (used.user + used.system) / iterations / BATCH;
}

/** The backend's CPU time from /proc, in µs (clock ticks of 10 ms, so long runs). */
function backendMicroseconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

async function main() {
  const db = new Client({
    connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  });
  await db.connect();
  const pid = (await db.query('select pg_backend_pid() as pid')).rows[0].pid;
  const statement = {
    name: 'capture-params',
    text: `select count(*)
           from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[],
                       $7::timestamptz[], $8::int[], $9::boolean[])
             as t(id, token, method, headers, body_text, body_bytes, received_at, rules_version, forward)
           where headers::jsonb is not null and length(body_text) > 0 and forward`,
  };
  console.log(
    `a batch of ${BATCH} captures, body ${Buffer.byteLength(body)} bytes, headers ${headers.length}`,
  );
  for (let round = 1; round <= 3; round++)
    for (const [format, values] of Object.entries(formats)) {
      const node = nodeMicroseconds(values, 20_000);
      const before = backendMicroseconds(pid);
      const statements = 3000;
      for (let n = 0; n < statements; n++) await db.query({ ...statement, values: values() });
      const postgres = (backendMicroseconds(pid) - before) / statements / BATCH;
      console.log(
        `round ${round}, ${format}: Node ${node.toFixed(1)} µs, PostgreSQL ${postgres.toFixed(1)} µs a capture`,
      );
    }
  await db.end();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
