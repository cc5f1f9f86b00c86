#!/usr/bin/env node
// The floor of a durable capture on this machine: the reference server's work (store the request, push
// its id to a Redis list, answer after the commit) with the reference's design plus group commit, on a
// bare node:http server: the requests waiting when a connection frees up are inserted in one statement
// (2 connections, up to 500 rows), and their ids pushed in one LPUSH. No endpoint lookup, no deliveries,
// no search, no live updates: what Hooktrail's capture path costs above it is what those cost.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench REDIS_URL=redis://127.0.0.1:6379 PORT=3998 \
//     QUEUE_KEY=floor:queue node bench/floor-capture.js
const http = require('node:http');
const crypto = require('node:crypto');
const { Pool } = require('pg');
const Redis = require('ioredis');

const LANES = 2;
const MAX_BATCH = 500;
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: LANES });
const redis = new Redis(process.env.REDIS_URL || 'redis://127.0.0.1:6379');
const waiting = [];
let inFlight = 0;

function reply(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function commit(batch) {
  await pool.query(
    `insert into floor_event (id, endpoint_id, method, headers, body, source_ip)
     select * from unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::bytea[], $6::text[])`,
    [
      batch.map((item) => item.id),
      batch.map((item) => item.token),
      batch.map((item) => item.method),
      batch.map((item) => JSON.stringify(item.headers)),
      batch.map((item) => item.body),
      batch.map((item) => item.sourceIp),
    ],
  );
  await redis.lpush(process.env.QUEUE_KEY || 'floor:queue', ...batch.map((item) => item.id));
}

function pump() {
  while (inFlight < LANES && waiting.length > 0) {
    const batch = waiting.splice(0, MAX_BATCH);
    inFlight += 1;
    commit(batch)
      .then(
        () => batch.forEach((item) => reply(item.res, 202, { id: item.id })),
        (error) => batch.forEach((item) => reply(item.res, 503, { error: String(error.message) })),
      )
      .finally(() => {
        inFlight -= 1;
        pump();
      });
  }
}

const server = http.createServer((req, res) => {
  const match = /^\/in\/([A-Za-z0-9_-]+)$/.exec(req.url.split('?')[0]);
  if (!match) return reply(res, 404, { error: 'not found' });
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    waiting.push({
      id: crypto.randomUUID(),
      token: match[1],
      method: req.method,
      headers: req.headers,
      body: Buffer.concat(chunks),
      sourceIp: req.socket.remoteAddress,
      res,
    });
    pump();
  });
});

pool
  .query(
    `create table if not exists floor_event (id uuid primary key, endpoint_id text not null, method text not null,
       headers jsonb not null, body bytea not null, source_ip text, received_at timestamptz not null default now())`,
  )
  .then(() => server.listen(Number(process.env.PORT), () => console.log(`floor on :${process.env.PORT}`)));
