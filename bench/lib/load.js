// Load generation (autocannon, and a paced open-loop sender; in this process), metered by the CPU it costs
// the server, and the request bodies of the benchmark.
const autocannon = require('autocannon');
const { createHmac } = require('node:crypto');
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { setTimeout: sleep } = require('node:timers/promises');
const { percentile } = require('./report');
const { cpuMeter } = require('./processes');

const now = () => performance.timeOrigin + performance.now();

/** The Stripe event id of webhookBody's bodies. */
const TEMPLATE_EVENT_ID = 'evt_1QbenchA9f7e97965d6cf';

/** A Stripe-like invoice.paid body padded to exactly `bytes` bytes; `marker` adds "bench_seq". */
function webhookBody(bytes = 1024, marker) {
  const head = {
    id: TEMPLATE_EVENT_ID,
    object: 'event',
    api_version: '2024-06-20',
    created: 1795407398,
    type: 'invoice.paid',
    ...(marker === undefined ? {} : { bench_seq: marker }),
    data: {
      object: {
        id: 'in_1Qbench419a1fa4571e3032',
        object: 'invoice',
        amount_due: 17700,
        amount_paid: 17700,
        currency: 'usd',
        customer: 'cus_a9f7e97965d6cf',
        customer_email: 'user1@example.com',
        billing_reason: 'subscription_cycle',
        status: 'paid',
        subscription: 'sub_0cf81f9038402e85910cfad1',
        description: '',
      },
    },
    livemode: false,
  };
  const empty = Buffer.byteLength(JSON.stringify(head));
  head.data.object.description = 'x'.repeat(Math.max(0, bytes - empty));
  return JSON.stringify(head);
}

const HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
  'stripe-signature': 't=1795407398,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
};

/** One autocannon run; resolves with its result unaggregated (and its URL), as summarize takes it. */
function run(options) {
  return new Promise((resolve, reject) => {
    const instance = autocannon({ timeout: 10, ...options, skipAggregateResult: true }, (error, result) =>
      error ? reject(error) : resolve({ ...result, url: options.url }),
    );
    // Uncounted: autocannon reports each response in the result; nothing to print while running.
    instance.on('error', () => undefined);
  });
}

/**
 * The figures that the report uses, of one run's unaggregated result or of several runs of one load taken
 * as one (`raws`: their latencies merged into one histogram, their counts and times summed). The results
 * are kept, for joinRuns.
 */
function summarize(...raws) {
  const result = autocannon.aggregateResult(raws, { url: raws[0].url });
  const ok = result['2xx'];
  const durationS = raws.reduce((total, raw) => total + raw.duration, 0);
  return {
    requests: result.requests.total,
    ok,
    perSecond: ok / durationS,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    non2xx: result.non2xx,
    socketErrors: result.errors,
    timeouts: result.timeouts,
    durationS,
    raws,
  };
}

/** Several runs of one load (summarized) as one run: its latency percentiles those of all their answers. */
const joinRuns = (runs) => summarize(...runs.flatMap((run) => run.raws));

/**
 * A POST load (scenario 1, the soak, the drain burst): one constant `body`, or each request the next of
 * `bodies` in turn.
 */
async function constantLoad(url, { connections, duration, amount, overallRate, body, bodies }) {
  let next = 0;
  const result = await run({
    url,
    method: 'POST',
    headers: HEADERS,
    ...(bodies === undefined
      ? { body }
      : {
          requests: [{ setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length] }) }],
        }),
    connections,
    ...(duration === undefined ? {} : { duration }),
    ...(amount === undefined ? {} : { amount }),
    ...(overallRate === undefined ? {} : { overallRate }),
  });
  return summarize(result);
}

/**
 * Marked captures at `ratePerS` for `duration` s, open loop as a provider sends them: capture n is due at
 * start + n / ratePerS whatever the answers before it (autocannon's `overallRate` instead sends each
 * second's quota back to back at the start of the second: 200/s came as bursts of 200 in about 150 ms).
 * Every body carries a unique "bench_seq" marker; the time each 2xx arrives is recorded by marker, so that
 * the sink's arrival time of the same marker gives capture-to-attempt latency. A capture's own latency is
 * counted from when it was due, and every capture is awaited (none is in flight at the end).
 */
async function markedLoad(url, { connections, duration, ratePerS, firstMarker }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const answered = new Map();
  const latencies = [];
  let errors = 0;
  // Each capture is counted once: an error after its answer (or a second error) changes nothing.
  const send = (marker, due) =>
    new Promise((resolve) => {
      const body = webhookBody(1024, marker);
      let settled = false;
      const settle = (answeredAt) => {
        if (settled) return;
        settled = true;
        if (answeredAt === undefined) errors += 1;
        else {
          answered.set(marker, answeredAt);
          latencies.push(answeredAt - due);
        }
        resolve();
      };
      const fail = () => settle(undefined);
      const request = http.request(
        url,
        { method: 'POST', agent, headers: HEADERS, timeout: 10_000 },
        (response) => {
          response.resume();
          response.once('end', () =>
            response.statusCode >= 200 && response.statusCode < 300 ? settle(now()) : fail(),
          );
          response.once('error', fail);
        },
      );
      request.once('timeout', () => request.destroy(new Error('timed out')));
      request.once('error', fail);
      request.end(body);
    });
  const total = Math.round(ratePerS * duration);
  const start = now();
  const sends = [];
  for (let n = 0; n < total; n += 1) {
    const due = start + (n * 1000) / ratePerS;
    if (due > now()) await sleep(due - now());
    sends.push(send(firstMarker + n, due));
  }
  await Promise.all(sends);
  agent.destroy();
  return {
    requests: total,
    ok: answered.size,
    perSecond: answered.size / ((now() - start) / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    answeredAt: answered,
  };
}

/** Stripe's signature header of a body (its documented scheme: HMAC-SHA256 of "<t>.<body>"). */
function stripeSignature(secret, body, timestamp = Math.floor(Date.now() / 1000)) {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${mac}`;
}

/** The last Stripe event id number a signed load sent: ids never repeat across loads (a warm-up's included). */
let signedSequence = 0;

/**
 * A load of Stripe-signed 1 KB bodies, each with its own event id, except every `repeatEvery`-th request,
 * which sends the previous body again (a provider's re-delivery): the ingest rules scenario.
 */
async function signedLoad(url, { connections, duration, secret, repeatEvery }) {
  // The body around its event id, made once: a request costs the load generator a concatenation and an HMAC.
  const [head, tail] = webhookBody(1024).split(TEMPLATE_EVENT_ID);
  let sequence = 0;
  let duplicates = 0;
  let previous;
  const result = await run({
    url,
    connections,
    duration,
    requests: [
      {
        method: 'POST',
        headers: HEADERS,
        setupRequest(request) {
          sequence += 1;
          const repeat = previous !== undefined && sequence % repeatEvery === 0;
          const body = repeat ? previous : `${head}evt_bench_${(signedSequence += 1)}${tail}`;
          previous = body;
          request.headers['stripe-signature'] = stripeSignature(secret, body);
          request.body = body;
          return request;
        },
        onResponse(status, body) {
          if (status === 200 && body.includes('"duplicate":true')) duplicates += 1;
        },
      },
    ],
  });
  return { ...summarize(result), duplicates };
}

/** Runs a load (constantLoad, or `loader`) while metering the CPU of a process and of its database's backends: µs per 2xx. */
async function meteredLoad(url, load, processPid, backends, loader = constantLoad) {
  const processCpu = cpuMeter(async () => [processPid]);
  const databaseCpu = cpuMeter(backends);
  await Promise.all([processCpu.start(), databaseCpu.start()]);
  const result = await loader(url, load);
  const [processMs, databaseMs] = await Promise.all([processCpu.stop(), databaseCpu.stop()]);
  return {
    ...result,
    processUs: (processMs * 1000) / Math.max(1, result.ok),
    databaseUs: (databaseMs * 1000) / Math.max(1, result.ok),
  };
}

module.exports = { webhookBody, constantLoad, markedLoad, signedLoad, meteredLoad, joinRuns, now };
