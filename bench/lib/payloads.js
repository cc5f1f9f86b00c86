// What the capture loads of scenarios 1 and 2 send: the one 1 KB body, or with BENCH_BODIES=realistic
// 20,000 different payloads of scenario 3's four kinds (lib/seed.js); and its name in their rows.
const { CONFIG } = require('./config');
const { webhookBody } = require('./load');
const { realisticBodiesSql } = require('./seed');
const { count } = require('./report');

/** The payloads of scenario 1's and 2's loads: the one 1 KB body, or BENCH_BODIES=realistic's. */
async function capturePayloads(db) {
  if (!CONFIG.realisticBodies) return { body: webhookBody(1024) };
  const { rows } = await db.query(realisticBodiesSql(CONFIG.realisticBodyCount));
  return { bodies: rows.map((row) => row.body_text) };
}

/** What scenario 1's and 2's loads send, for their rows' names. */
const PAYLOADS = CONFIG.realisticBodies
  ? `${count(CONFIG.realisticBodyCount)} realistic ~1.1 KB POSTs (BENCH_BODIES)`
  : '1 KB POST';

module.exports = { capturePayloads, PAYLOADS };
