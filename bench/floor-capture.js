#!/usr/bin/env node
// The floor of a durable capture on this machine: the reference server's work (store the request, push
// its id to a Redis list, answer after the commit) with the reference's design plus group commit, on a
// bare node:http server: the requests waiting when a connection frees up are inserted in one statement
// (2 connections, up to 500 rows), and their ids pushed in one LPUSH. No endpoint lookup, no deliveries,
// no search, no live updates: what Hooktrail's capture path costs above it is what those cost.
//
// `/rules/<token>` adds the least work of scenario 7's ingest rules (with STRIPE_SECRET): the
// Stripe-Signature checked over the raw bytes (HMAC-SHA256, constant-time, 5-minute tolerance), the body
// parsed once for its event id and the two destinations' filters (the scenario's, written out here), and
// the dedup claims on the event ids made in Redis, one call for the batch (SET NX GET with the window as
// its expiry, in a script), before its statement: a repeat is answered 200 with the first event's id and
// not stored. The floor of a capture with rules, to set scenario 7's ratio against.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench REDIS_URL=redis://127.0.0.1:6379 PORT=3998 \
//     QUEUE_KEY=floor:queue STRIPE_SECRET=whsec_... node bench/floor-capture.js
const http = require('node:http');
const crypto = require('node:crypto');
const { Pool } = require('pg');
const Redis = require('ioredis');

const LANES = 2;
const MAX_BATCH = 500;
const TOLERANCE_S = 300;
const DEDUP_WINDOW_MS = 3_600_000;
const QUEUE_KEY = process.env.QUEUE_KEY || 'floor:queue';
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: LANES });
const redis = new Redis(process.env.REDIS_URL || 'redis://127.0.0.1:6379');
const waiting = [];
let inFlight = 0;

function reply(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Whether the Stripe-Signature header signs `<t>.<body>` with STRIPE_SECRET, within the tolerance. */
function stripeVerified(header, body) {
  if (typeof header !== 'string') return false;
  let timestamp = NaN;
  const signatures = [];
  for (const part of header.split(',')) {
    if (part.startsWith('t=')) timestamp = Number(part.slice(2));
    else if (part.startsWith('v1=')) signatures.push(Buffer.from(part.slice(3), 'hex'));
  }
  if (!(Math.abs(Date.now() / 1000 - timestamp) <= TOLERANCE_S)) return false;
  const expected = crypto
    .createHmac('sha256', process.env.STRIPE_SECRET)
    .update(`${timestamp}.`)
    .update(body)
    .digest();
  return signatures.some((mac) => mac.length === expected.length && crypto.timingSafeEqual(mac, expected));
}

/** Scenario 7's two filters: the numbers of the destinations this event goes to, space-separated. */
function destinationsOf(headers, payload) {
  const chosen = [];
  if (String(payload.type).startsWith('invoice.') && String(headers['content-type']).includes('json'))
    chosen.push(1);
  const object = payload.data?.object;
  if (object?.amount_paid >= 10000 && ['usd', 'eur'].includes(object.currency)) chosen.push(2);
  return chosen.join(' ');
}

const PLAIN_SQL = `
insert into floor_event (id, endpoint_id, method, headers, body, source_ip)
select * from unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::bytea[], $6::text[])`;

const RULES_SQL = `
insert into floor_event (id, endpoint_id, method, headers, body, source_ip, destinations)
select * from unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::bytea[], $6::text[], $7::text[])`;

// Each key is claimed by the first event that asks for it; the claim holding each key is answered.
redis.defineCommand('claim', {
  lua: `local held = {}
for i, key in ipairs(KEYS) do
  held[i] = redis.call('SET', key, ARGV[i], 'NX', 'GET', 'PX', ${DEDUP_WINDOW_MS}) or ARGV[i]
end
return held`,
});

/** Stores a batch of one kind in one statement and pushes the stored ids; each item's event id back. */
async function commit(batch) {
  const columns = [
    batch.map((item) => item.id),
    batch.map((item) => item.token),
    batch.map((item) => item.method),
    batch.map((item) => JSON.stringify(item.headers)),
    batch.map((item) => item.body),
    batch.map((item) => item.sourceIp),
  ];
  if (!batch[0].ruled) {
    await pool.query(PLAIN_SQL, columns);
    await redis.lpush(QUEUE_KEY, ...columns[0]);
    return columns[0];
  }
  const firstIds = await redis.claim(
    batch.length,
    ...batch.map((item) => `${QUEUE_KEY}:dedup:${item.token}:${item.dedupKey}`),
    ...columns[0],
  );
  const firsts = (values) => values.filter((_, index) => firstIds[index] === batch[index].id);
  const stored = firsts(columns[0]);
  if (stored.length > 0) {
    await pool.query(RULES_SQL, [...columns.map(firsts), firsts(batch.map((item) => item.destinations))]);
    await redis.lpush(QUEUE_KEY, ...stored);
  }
  return firstIds;
}

/** The waiting requests at the head of the line that are of the same kind (plain or with rules). */
function takeBatch() {
  const { ruled } = waiting[0];
  let size = 1;
  while (size < waiting.length && size < MAX_BATCH && waiting[size].ruled === ruled) size += 1;
  return waiting.splice(0, size);
}

function pump() {
  while (inFlight < LANES && waiting.length > 0) {
    const batch = takeBatch();
    inFlight += 1;
    commit(batch)
      .then(
        (ids) =>
          batch.forEach((item, index) =>
            ids[index] === item.id
              ? reply(item.res, 202, { id: item.id })
              : reply(item.res, 200, { id: ids[index], duplicate: true }),
          ),
        (error) => batch.forEach((item) => reply(item.res, 503, { error: String(error.message) })),
      )
      .finally(() => {
        inFlight -= 1;
        pump();
      });
  }
}

/** A request to `/rules/<token>` judged by scenario 7's rules: false when its signature does not hold. */
function judged(item) {
  if (!stripeVerified(item.headers['stripe-signature'], item.body)) return false;
  let payload;
  try {
    payload = JSON.parse(item.body.toString('utf8'));
  } catch {
    return false;
  }
  item.dedupKey = String(payload.id);
  item.destinations = destinationsOf(item.headers, payload);
  return true;
}

const server = http.createServer((req, res) => {
  const match = /^\/(in|rules)\/([A-Za-z0-9_-]+)$/.exec(req.url.split('?')[0]);
  if (!match) return reply(res, 404, { error: 'not found' });
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const item = {
      id: crypto.randomUUID(),
      token: match[2],
      method: req.method,
      headers: req.headers,
      body: Buffer.concat(chunks),
      sourceIp: req.socket.remoteAddress,
      ruled: match[1] === 'rules',
      res,
    };
    if (item.ruled && !judged(item)) return reply(res, 401, { error: 'signature' });
    waiting.push(item);
    pump();
  });
});

pool
  .query(
    `create table if not exists floor_event (id uuid primary key, endpoint_id text not null, method text not null,
       headers jsonb not null, body bytea not null, source_ip text, destinations text,
       received_at timestamptz not null default now());`,
  )
  .then(() => server.listen(Number(process.env.PORT), () => console.log(`floor on :${process.env.PORT}`)));
