// Scenario 6, fair share (BENCH_SCENARIOS' `flow`, with scenario 5): a healthy endpoint's capture →
// arrival latency while another endpoint's deliveries wait for a hanging and a 2-s destination.
const { setTimeout: sleep } = require('node:timers/promises');
const { CONFIG, log } = require('../lib/config');
const { addRow, notes, ledger } = require('../lib/results');
const { webhookBody, constantLoad } = require('../lib/load');
const { api } = require('../lib/setup');
const { waitForDrain, steadyArrivals } = require('../lib/deliveries');
const { percentile, ms, count } = require('../lib/report');

/** Scenario 6 samples the delivery queue this often, this many times, from the healthy flow's start. */
const FLOW_QUEUE_SAMPLE_MS = 500;
const FLOW_QUEUE_SAMPLES = 16;

/**
 * The Bull queue's jobs waiting / delayed / active every `intervalMs`, `samples` times (where a flow's
 * deliveries waited), as text; a sample Redis did not answer is "?". Never rejects.
 */
async function sampleQueue(queue, intervalMs, samples) {
  const counts = [];
  for (let index = 0; index < samples; index += 1) {
    const [sampled] = await Promise.all([queue.getJobCounts().catch(() => null), sleep(intervalMs)]);
    counts.push(sampled ? `${sampled.waiting}/${sampled.delayed}/${sampled.active}` : '?');
  }
  return counts.join(', ');
}

/**
 * Scenario 6, fair share: another endpoint's 1,000 events wait for a destination that never answers and
 * one that answers after 2 s (2,000 deliveries), while the capture endpoint takes 200 events/s for 30 s;
 * its healthy destination's capture → arrival latency is measured. The noisy endpoint is deleted after.
 */
async function scenarioFairShare(context) {
  const { baseUrl, token, sink, db } = context;
  const scenario = '6. fair share';
  const { endpoint: noisy } = await api(baseUrl, 'POST', '/api/endpoints', {
    token,
    body: { name: 'noisy' },
  });
  for (const path of ['hang', 'slow'])
    await api(baseUrl, 'POST', `/api/endpoints/${noisy.id}/destinations`, {
      token,
      body: { url: new URL(`/${path}`, sink.url).href },
    });
  log(`scenario 6: 1,000 events for a hanging and a 2-s destination, then ${CONFIG.steadyRate}/s healthy`);
  const backlog = await constantLoad(`${baseUrl}/in/${noisy.public_token}`, {
    connections: 10,
    amount: CONFIG.noisyEvents,
    body: webhookBody(1024),
  });
  ledger.serviceErrors += backlog.errors;
  const queueSamples = sampleQueue(context.queue, FLOW_QUEUE_SAMPLE_MS, FLOW_QUEUE_SAMPLES);
  const { latencies, afterFirstSecond, missing } = await steadyArrivals(context.captureUrl, sink, 1_000_000);
  const { noisy: noisyRequests } = await sink.stats();
  await api(baseUrl, 'DELETE', `/api/endpoints/${noisy.id}`, { token });
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  addRow(
    scenario,
    `healthy capture → arrival at ${CONFIG.steadyRate}/s while ${count(2 * backlog.ok)} deliveries wait for a hanging and a 2-s destination, p50 / p99`,
    `${ms(p50)} / ${ms(p99)}`,
    'p99 ≤ 250 ms',
    p99 <= 250 && missing === 0,
  );
  notes.push(
    `Scenario 6: the noisy destinations got ${count(noisyRequests)} requests meanwhile; the healthy p99 ` +
      `without the first second of the flow (the noisy backlog's first dispatch) ${ms(percentile(afterFirstSecond, 99))}` +
      (missing ? `; ${missing} healthy events never arrived` : '') +
      `. The delivery queue's jobs waiting / delayed / active every ${FLOW_QUEUE_SAMPLE_MS} ms from the flow's start: ` +
      (await queueSamples) +
      '.',
  );
  if (missing > 0) ledger.serviceErrors += missing;
  await waitForDrain(db, 'after scenario 6');
}

module.exports = { scenarioFairShare };
