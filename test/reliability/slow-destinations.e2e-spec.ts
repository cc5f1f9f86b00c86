import { setTimeout as sleep } from 'node:timers/promises';
import { pipeline, Readable } from 'node:stream';
import { Client } from 'pg';
import { HttpsDestination, type Responder } from '../support/https-destination';
import { type ServiceProcess, stopService } from '../support/service-process';
import { startTestApp, type TestApp } from '../support/test-app';
import { addDestination, capture, createEndpoint, type EndpointFixture } from '../support/webhook-fixtures';
import { acknowledgedIds, captureAtRate, deliveryStatusCounts, statusCounts } from './support/ledger';
import { mebibytes, residentBytes, RssSampler, spawnWorker } from './support/processes';

const TIMEOUT_MS = 2_000;
/** Events captured for the troubled endpoint: each is one delivery to every bad destination. */
const EVENTS = 20;
const BIG_BODY_BYTES = 50 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'x');
/** The worker may grow by this much, however many 50 MB answers it is reading at once. */
const RSS_GROWTH_LIMIT_BYTES = 100 * 1024 * 1024;

/** Never answers. */
const hang: Responder = () => undefined;

/** Writes its raw response (status line first) one byte every 100 ms: it would take 6 s in all. */
const drip: Responder = (_request, response) => {
  const socket = response.socket;
  if (!socket) return;
  const bytes = Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok');
  let sent = 0;
  const timer = setInterval(() => {
    if (sent < bytes.length && !socket.destroyed) socket.write(bytes.subarray(sent, ++sent));
    else clearInterval(timer);
  }, 100);
  socket.once('close', () => clearInterval(timer));
};

function* bigBody(): Generator<Buffer> {
  for (let sent = 0; sent < BIG_BODY_BYTES; sent += CHUNK.length) yield CHUNK;
}

/** Answers 200 with a 50 MB body, streamed as fast as the client reads it, as a real server would. */
const huge: Responder = (_request, response) => {
  response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(BIG_BODY_BYTES) });
  pipeline(Readable.from(bigBody()), response, () => undefined);
};

interface AttemptRow {
  destination_url: string;
  status: string;
  attempts: {
    response_code: number | null;
    duration_ms: number;
    error: string | null;
    response_body: string | null;
  }[];
}

async function deliveryRows(databaseUrl: string, eventIds: string[]): Promise<AttemptRow[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<AttemptRow>(
      'select destination_url, status, attempts from deliveries where event_id = any($1::uuid[])',
      [eventIds],
    );
    return rows;
  } finally {
    await client.end();
  }
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not done in ${timeoutMs} ms`);
    await sleep(500);
  }
}

describe('reliability: destinations that hang, drip, or answer 50 MB', () => {
  it(`ends every attempt by the ${TIMEOUT_MS} ms time-out, keeps the worker's memory bounded, and keeps other destinations flowing`, async () => {
    const bad = await Promise.all([hang, drip, huge].map((responder) => HttpsDestination.start(responder)));
    const [hanging, dripping, big] = bad;
    const healthy = await HttpsDestination.start();
    let sut: TestApp | undefined;
    let worker: ServiceProcess | undefined;
    try {
      sut = await startTestApp({
        APP_ROLE: 'api',
        DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
        DELIVERY_RETRY_DELAYS_MS: '500,500,500,500',
      });
      worker = await spawnWorker(sut.env);
      const troubled = await createEndpoint(sut.url);
      for (const destination of bad) await addDestination(sut.url, troubled, destination.url);
      const flowing: EndpointFixture = await createEndpoint(sut.url, troubled.user);
      await addDestination(sut.url, flowing, healthy.url);

      // Warm the worker up, then take its resting size.
      await capture(flowing, '{"warm":true}');
      await healthy.waitForRequests(1);
      await sleep(1000);
      const baseline = residentBytes(worker.child.pid!);
      const sampler = new RssSampler(worker.child.pid!);

      const troubledIds = await Promise.all(
        Array.from({ length: EVENTS }, (_, n) => capture(troubled, `{"n":${n}}`)),
      );
      const flowed = await captureAtRate(flowing.captureUrl, { ratePerS: 20, total: 240 });
      await waitFor(async () => {
        const counts = await deliveryStatusCounts(sut!.env.DATABASE_URL, troubledIds);
        return counts.delivered === EVENTS && counts.dead_letter === 2 * EVENTS;
      }, 60_000);
      const peak = sampler.stop();

      const rows = await deliveryRows(sut.env.DATABASE_URL, troubledIds);
      const of = (destination: HttpsDestination) =>
        rows.filter((row) => row.destination_url === destination.url);
      const timedOut = [...of(hanging), ...of(dripping)].flatMap((row) => row.attempts);
      const durations = timedOut.map((attempt) => attempt.duration_ms);
      const bigAttempts = of(big).flatMap((row) => row.attempts);
      const latencies = flowed.map((result, n) => {
        const arrived = healthy.received.find((request) => request.body.toString() === `{"n":${n}}`);
        return arrived ? arrived.at - result.sentAt : Infinity;
      });
      latencies.sort((a, b) => a - b);
      console.log(
        `worker RSS ${mebibytes(baseline)} MiB at rest, peak ${mebibytes(peak)} MiB (+${mebibytes(peak - baseline)} MiB) ` +
          `while ${EVENTS} answers of 50 MB and ${2 * EVENTS} stuck destinations were in flight; ` +
          `${timedOut.length} timed-out attempts took ${Math.min(...durations)}–${Math.max(...durations)} ms; ` +
          `50 MB answers took ${Math.max(...bigAttempts.map((attempt) => attempt.duration_ms))} ms at most; ` +
          `healthy destination: ${healthy.received.length - 1} of ${flowed.length} delivered, capture → arrival ` +
          `p50 ${latencies[Math.floor(latencies.length / 2)]} ms, p99 ${latencies[Math.floor(latencies.length * 0.99)]} ms, max ${latencies.at(-1)} ms`,
      );

      // Every attempt at a hanging or dripping destination ended at the time-out, five attempts each.
      expect(timedOut).toHaveLength(2 * EVENTS * 5);
      for (const attempt of timedOut)
        expect(attempt).toMatchObject({ response_code: null, error: `timed out after ${TIMEOUT_MS} ms` });
      expect(Math.min(...durations)).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(Math.max(...durations)).toBeLessThan(TIMEOUT_MS + 1000);
      // The 50 MB answers were delivered on their first attempt, with only their first 1 KiB read.
      expect(bigAttempts).toHaveLength(EVENTS);
      for (const attempt of bigAttempts) {
        expect(attempt).toMatchObject({ response_code: 200, response_body: 'x'.repeat(1024) });
        expect(attempt.duration_ms).toBeLessThan(TIMEOUT_MS);
      }
      expect(peak - baseline).toBeLessThan(RSS_GROWTH_LIMIT_BYTES);
      // The healthy destination kept flowing: everything arrived, none of it held up to a time-out.
      expect(statusCounts(flowed)).toEqual({ 200: flowed.length });
      expect(await deliveryStatusCounts(sut.env.DATABASE_URL, acknowledgedIds(flowed))).toEqual({
        delivered: flowed.length,
      });
      expect(latencies.at(-1)).toBeLessThan(TIMEOUT_MS);
    } finally {
      if (worker) await stopService(worker, 'SIGKILL');
      await sut?.close();
      for (const destination of [...bad, healthy]) await destination.close();
    }
  }, 120_000);
});
