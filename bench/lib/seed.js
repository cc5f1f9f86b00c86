// Bulk seeding of one endpoint's events for the reads-at-scale and retention scenarios: one INSERT ... SELECT over
// generate_series per chunk, the JSON bodies built by SQL string functions. Four kinds of realistic
// payloads (Stripe invoice.paid and charge.succeeded, GitHub push, Shopify orders/create), statuses
// mixed, received_at spread over 90 days (newest first by n; another span on request). Exactly one event, rareEvent(total), has a
// customer id of its own: md5('hooktrail-rare-customer').
// seedEvents runs those inserts on the service's database; recordSeededAttempts gives seeded deliveries
// an attempt each (scenarios 8 and 9), in the destination's statistics as well.
const { CONFIG, log } = require('./config');
const { ledger } = require('./results');
const { count } = require('./report');

/** The number of the one event (of `total`) whose Stripe customer id occurs nowhere else: n % 10 = 2, a Stripe event. */
const rareEvent = (total) => Math.floor(total / 23) * 10 + 2;
const RARE_CUSTOMER_SQL = `'cus_' || substr(md5('hooktrail-rare-customer'), 1, 14)`;
/** The common word searched: present in every Stripe and Shopify body (80 % of the events). */
const COMMON_WORD = 'customer';
const DAYS = 90;

/** Hex digits derived from n and a salt: stable across runs, different per field. */
const hex = (salt, length) =>
  length <= 32
    ? `substr(md5(n::text || '${salt}'), 1, ${length})`
    : `substr(md5(n::text || '${salt}') || md5(n::text || '${salt}2'), 1, ${length})`;
const digits = (salt, modulo) =>
  `(('x' || substr(md5(n::text || '${salt}'), 1, 8))::bit(32)::int & 2147483647) % ${modulo}`;

const STRIPE_INVOICE = `format(
  '{"id":"evt_%s","object":"event","api_version":"2024-06-20","created":%s,"data":{"object":{"id":"in_%s","object":"invoice","account_country":"US","amount_due":%s,"amount_paid":%s,"amount_remaining":0,"attempt_count":1,"attempted":true,"billing_reason":"subscription_cycle","collection_method":"charge_automatically","currency":"usd","customer":"%s","customer_email":"user%s@example.com","customer_name":"Customer %s","hosted_invoice_url":"https://invoice.stripe.com/i/acct_1Nv0FGQ9RKHgCVdK/test_%s","lines":{"object":"list","data":[{"id":"il_%s","object":"line_item","amount":%s,"currency":"usd","description":"1 × Pro plan (at $%s.00 / month)","period":{"end":%s,"start":%s},"price":{"id":"price_1OhB2eQ9RKHgCVdKxQz","object":"price","recurring":{"interval":"month"},"unit_amount":%s}}],"has_more":false},"number":"INV-%s","paid":true,"status":"paid","subscription":"sub_%s"}},"livemode":false,"pending_webhooks":1,"request":{"id":null,"idempotency_key":null},"type":"invoice.paid"}',
  ${hex('e', 24)}, epoch, ${hex('i', 24)}, amount, amount, customer, cust, cust, ${hex('h', 32)}, ${hex('l', 24)},
  amount, amount / 100, epoch + 2592000, epoch, amount, lpad((n % 100000)::text, 6, '0'), ${hex('s', 24)})`;

const STRIPE_CHARGE = `format(
  '{"id":"evt_%s","object":"event","api_version":"2024-06-20","created":%s,"data":{"object":{"id":"ch_%s","object":"charge","amount":%s,"amount_captured":%s,"amount_refunded":0,"balance_transaction":"txn_%s","billing_details":{"address":{"city":"Berlin","country":"DE","line1":"Street %s","postal_code":"10115"},"email":"user%s@example.com","name":"Customer %s"},"captured":true,"currency":"eur","customer":"%s","description":"Order %s","outcome":{"network_status":"approved_by_network","risk_level":"normal","seller_message":"Payment complete.","type":"authorized"},"paid":true,"payment_intent":"pi_%s","payment_method_details":{"card":{"brand":"visa","country":"US","exp_month":12,"exp_year":2030,"funding":"credit","last4":"4242"},"type":"card"},"receipt_url":"https://pay.stripe.com/receipts/payment/%s","status":"succeeded"}},"livemode":false,"pending_webhooks":1,"request":{"id":"req_%s","idempotency_key":"%s"},"type":"charge.succeeded"}',
  ${hex('e', 24)}, epoch, ${hex('c', 24)}, amount, amount, ${hex('t', 24)}, n % 500, cust, cust, customer, n, ${hex('p', 24)},
  ${hex('r', 40)}, ${hex('q', 14)}, ${hex('k', 32)})`;

const GITHUB_PUSH = `format(
  '{"ref":"refs/heads/main","before":"%s","after":"%s","repository":{"id":%s,"node_id":"R_kgDO%s","name":"service-%s","full_name":"acme/service-%s","private":true,"owner":{"login":"acme","id":9919,"type":"Organization"},"html_url":"https://github.com/acme/service-%s","default_branch":"main","pushed_at":%s},"pusher":{"name":"dev%s","email":"dev%s@acme.dev"},"sender":{"login":"dev%s","id":%s,"type":"User"},"created":false,"deleted":false,"forced":false,"compare":"https://github.com/acme/service-%s/compare/%s...%s","commits":[{"id":"%s","tree_id":"%s","distinct":true,"message":"Fix retry handling in the %s module","timestamp":"%s","author":{"name":"Dev %s","email":"dev%s@acme.dev","username":"dev%s"},"added":[],"removed":[],"modified":["src/%s/handler.ts"]}],"head_commit":{"id":"%s","message":"Fix retry handling in the %s module","timestamp":"%s"}}',
  ${hex('b', 40)}, ${hex('a', 40)}, 600000 + n % 300, ${hex('n', 10)}, n % 300, n % 300, n % 300, epoch, n % 80, n % 80, n % 80,
  1000 + n % 80, n % 300, ${hex('b', 12)}, ${hex('a', 12)}, ${hex('a', 40)}, ${hex('t', 40)},
  (array['billing','checkout','search','auth','notify'])[1 + n % 5], to_char(received_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
  n % 80, n % 80, n % 80, (array['billing','checkout','search','auth','notify'])[1 + n % 5], ${hex('a', 40)},
  (array['billing','checkout','search','auth','notify'])[1 + n % 5], to_char(received_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))`;

const SHOPIFY_ORDER = `format(
  '{"id":%s,"admin_graphql_api_id":"gid://shopify/Order/%s","email":"buyer%s@example.com","created_at":"%s","currency":"USD","current_total_price":"%s.00","financial_status":"paid","fulfillment_status":null,"name":"#%s","order_number":%s,"processed_at":"%s","subtotal_price":"%s.00","total_price":"%s.00","total_tax":"0.00","customer":{"id":%s,"email":"buyer%s@example.com","first_name":"Buyer","last_name":"%s","orders_count":%s,"state":"enabled","verified_email":true},"line_items":[{"id":%s,"name":"Organic cotton t-shirt - %s","price":"%s.00","product_id":%s,"quantity":%s,"sku":"TS-%s","title":"Organic cotton t-shirt","variant_title":"%s","vendor":"Acme Apparel"}],"shipping_address":{"address1":"%s Main St","city":"Portland","country_code":"US","province_code":"OR","zip":"97201"}}',
  5000000000000 + n, 5000000000000 + n, cust, to_char(received_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), amount / 100, 1000 + n, 1000 + n,
  to_char(received_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), amount / 100, amount / 100, 7000000000 + cust, cust, cust, 1 + n % 12,
  13000000000 + n, (array['S','M','L','XL'])[1 + n % 4], amount / 100, 8000000000 + n % 50, 1 + n % 3, n % 50,
  (array['S','M','L','XL'])[1 + n % 4], n % 900)`;

const HEADERS = `case kind
  when 'stripe' then jsonb_build_object('host', 'hooks.example.com', 'user-agent', 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
    'content-type', 'application/json; charset=utf-8', 'accept', '*/*; q=0.5, application/xml',
    'cache-control', 'no-cache', 'stripe-signature', 't=' || epoch || ',v1=' || ${hex('g', 32)} || ${hex('G', 32)})
  when 'github' then jsonb_build_object('host', 'hooks.example.com', 'user-agent', 'GitHub-Hookshot/8e05c5c', 'accept', '*/*',
    'content-type', 'application/json', 'x-github-event', 'push', 'x-github-delivery', ${hex('d', 32)},
    'x-github-hook-id', '48213377', 'x-hub-signature-256', 'sha256=' || ${hex('g', 32)} || ${hex('G', 32)})
  else jsonb_build_object('host', 'hooks.example.com', 'user-agent', 'Shopify-Captain-Hook', 'accept', '*/*',
    'content-type', 'application/json', 'x-shopify-topic', 'orders/create', 'x-shopify-shop-domain', 'acme.myshopify.com',
    'x-shopify-webhook-id', ${hex('w', 32)}, 'x-shopify-hmac-sha256', ${hex('g', 32)})
  end`;

/**
 * INSERT of events number `from` to `to` (inclusive) of `total` for one endpoint, received over the `days`
 * before `olderThanDays` days ago (by default the 90 days up to now).
 */
function insertChunkSql(endpointId, from, to, total, span) {
  return `
insert into events (id, endpoint_id, status, method, headers, query, body_text, source_ip, received_at, searchable)
${seededRowsSql(endpointId, from, to, total, span)}`;
}

/**
 * `count` bodies of seeded events (the four kinds, each with ids of its own), for loads that send realistic
 * payloads rather than one body again and again (BENCH_BODIES=realistic).
 */
function realisticBodiesSql(count) {
  return `select body_text from (${seededRowsSql('00000000-0000-4000-8000-000000000000', 1, count, count)})
    as seeded_rows (id, endpoint_id, status, method, headers, query, body_text, source_ip, received_at, searchable)`;
}

/** The SELECT of insertChunkSql: the seeded events' columns, in its order. */
function seededRowsSql(endpointId, from, to, total, { days = DAYS, olderThanDays = 0 } = {}) {
  return `
select md5(n::text || '${endpointId}')::uuid, '${endpointId}', status, 'POST', ${HEADERS}, '', case
    when kind = 'stripe' and n % 3 = 0 then ${STRIPE_CHARGE}
    when kind = 'stripe' then ${STRIPE_INVOICE}
    when kind = 'github' then ${GITHUB_PUSH}
    else ${SHOPIFY_ORDER} end,
  '203.0.113.' || (n % 250), received_at, true
from (
  select n, received_at, extract(epoch from received_at)::bigint as epoch,
    case when n % 10 < 6 then 'stripe' when n % 10 < 8 then 'github' else 'shopify' end as kind,
    case when n % 100 < 2 then 'dead_letter' when n % 100 < 5 then 'failed' when n % 100 < 7 then 'received'
      else 'delivered' end as status,
    n % 40000 as cust,
    case when n = ${rareEvent(total)} then ${RARE_CUSTOMER_SQL} else 'cus_' || substr(md5('c' || (n % 40000)), 1, 14) end as customer,
    500 + ${digits('m', 2000)} * 100 as amount
  from (select n, now() - make_interval(secs => ${olderThanDays * 86400} + n * ${(days * 86400) / total}::float8) as received_at
        from generate_series(${from}, ${to}) as n) numbered
) seeded`;
}

/**
 * Seeds `total` events into `endpointId` (GIN indexes rebuilt after the inserts); `span` places them in time
 * (insertChunkSql: by default the last 90 days).
 */
async function seedEvents(db, endpointId, { total = CONFIG.readEvents, concurrently = false, span } = {}) {
  const begin = Date.now();
  const { rows: ginIndexes } = await db.query(
    `select indexname, indexdef from pg_indexes where tablename = 'events' and indexdef ilike '% using gin %'`,
  );
  // Rebuilding a GIN index once is several times faster than growing it by a million rows.
  for (const index of ginIndexes)
    await db.query(`drop index ${concurrently ? 'concurrently' : ''} "${index.indexname}"`);
  const chunk = 100_000;
  for (let from = 1; from <= total; from += chunk) {
    await db.query(insertChunkSql(endpointId, from, Math.min(total, from + chunk - 1), total, span));
  }
  const inserted = (Date.now() - begin) / 1000;
  log(`${count(total)} events inserted in ${inserted.toFixed(0)} s; rebuilding GIN indexes`);
  await db.query(`set maintenance_work_mem = '512MB'`);
  for (const index of ginIndexes) {
    await db.query(
      concurrently ? index.indexdef.replace(/^CREATE INDEX/i, 'CREATE INDEX CONCURRENTLY') : index.indexdef,
    );
  }
  await db.query('reset maintenance_work_mem');
  await db.query('vacuum (analyze) events');
  return { seconds: (Date.now() - begin) / 1000, inserted };
}

/** Events of scenario 8 inserted per statement. */
const STATS_SEED_CHUNK = 100_000;

/**
 * Gives up to `limit` of the destination's deliveries without an attempt one (95 % 200, 5 % 500; 20 to 275
 * ms), and adds them to the destination's statistics in the same statement, as the worker does when it
 * records attempts (shard 0, each bucket's latency histogram built with the database's own functions).
 * Their deliveries are left out of the ledger: nothing was sent. Returns how many.
 */
async function recordSeededAttempts(db, destinationId, limit) {
  if (!ledger.seededDestinations.includes(destinationId)) ledger.seededDestinations.push(destinationId);
  const {
    rows: [{ moved }],
  } = await db.query(
    `with attempted as (
       update deliveries d set attempt_count = 1, last_attempted_at = d.created_at,
         attempts = jsonb_build_array(jsonb_build_object(
           'at', d.created_at, 'response_code', case when abs(hashtext(d.id::text)) % 20 = 0 then 500 else 200 end,
           'duration_ms', 20 + abs(hashtext(d.id::text)) % 256, 'error', null, 'response_body', null))
       where d.id in (select id from deliveries where destination_id = $1 and attempt_count = 0 limit $2)
       returning d.created_at as at, (d.attempts -> 0 ->> 'response_code')::int as code,
                 (d.attempts -> 0 ->> 'duration_ms')::int as duration_ms),
     cells as (
       select spans.span, date_trunc(spans.span, at, 'UTC') as bucket_start, stats_latency_cell(duration_ms) as cell,
              count(*)::int as attempts, count(*) filter (where code between 200 and 299)::int as successes
       from attempted cross join (values ('minute'), ('hour'), ('day')) as spans(span)
       group by 1, 2, 3),
     added as (
       insert into destination_attempt_stats as s
         (destination_id, span, bucket_start, shard, attempts, successes, latency)
       select $1, span, bucket_start, 0, sum(attempts), sum(successes),
              stats_histogram_of(array_agg(cell), array_agg(attempts))
       from cells group by 1, 2, 3
       on conflict (destination_id, span, bucket_start, shard) do update set
         attempts = s.attempts + excluded.attempts, successes = s.successes + excluded.successes,
         latency = stats_histogram_add(s.latency, excluded.latency))
     select count(*)::int as moved from attempted`,
    [destinationId, limit],
  );
  return moved;
}

module.exports = {
  insertChunkSql,
  realisticBodiesSql,
  rareEvent,
  COMMON_WORD,
  DAYS,
  seedEvents,
  recordSeededAttempts,
  STATS_SEED_CHUNK,
};
