import { setTimeout as sleep } from 'node:timers/promises';
import { HttpsDestination } from '../support/https-destination';
import { ThrowawayRedis } from '../support/redis-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { addDestination, createEndpoint } from '../support/webhook-fixtures';
import {
  acknowledgedIds,
  allDelivered,
  captureAtRate,
  duplicateCount,
  latencyQuantile,
  statusCounts,
  waitForLedger,
} from './support/ledger';

const RATE_PER_S = 200;
const BEFORE_MS = 3_000;
const OUTAGE_MS = 20_000;
const AFTER_MS = 2_000;
const DELIVERED_WITHIN_MS = 60_000;

describe('reliability: Redis down under load', () => {
  it(`takes every capture at ${RATE_PER_S}/s through a ${OUTAGE_MS / 1000} s Redis outage and delivers all of them within ${DELIVERED_WITHIN_MS / 1000} s of its return`, async () => {
    const redis = await ThrowawayRedis.start();
    const destination = await HttpsDestination.start();
    let sut: TestApp | undefined;
    try {
      sut = await startTestApp({ REDIS_URL: redis.url, DELIVERY_RETRY_DELAYS_MS: '1000,1000,1000,1000' });
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut.url, fixture, destination.url);

      const total = (RATE_PER_S * (BEFORE_MS + OUTAGE_MS + AFTER_MS)) / 1000;
      const load = captureAtRate(fixture.captureUrl, { ratePerS: RATE_PER_S, total });
      await sleep(BEFORE_MS);
      await redis.stop();
      const down = Date.now();
      await sleep(OUTAGE_MS);
      await redis.startServer();
      const back = Date.now();
      const results = await load;

      const ids = acknowledgedIds(results);
      const books = await waitForLedger(sut.env.DATABASE_URL, ids, allDelivered, DELIVERED_WITHIN_MS);
      const deliveredAfterMs = Date.now() - back;
      const duringOutage = results.filter((result) => result.sentAt >= down && result.sentAt < back);
      console.log(
        `Redis down ${back - down} ms; captures ${JSON.stringify(statusCounts(results))}, ` +
          `${duringOutage.length} during the outage (p99 answer ${latencyQuantile(duringOutage, 0.99)} ms, ` +
          `max ${latencyQuantile(duringOutage, 1)} ms); all delivered ${deliveredAfterMs} ms after Redis returned; ` +
          `destination got ${destination.received.length} requests, ${duplicateCount(destination.received)} duplicates; ` +
          `ledger ${JSON.stringify({ ...books, missing: books.missing.length, unaccounted: books.unaccounted.length })}`,
      );

      expect(statusCounts(results)).toEqual({ 200: total });
      expect(duringOutage.length).toBeGreaterThanOrEqual((RATE_PER_S * OUTAGE_MS) / 1000 - RATE_PER_S);
      expect(books).toMatchObject({
        acknowledged: total,
        stored: total,
        delivered: total,
        missing: [],
        unaccounted: [],
      });
      expect(deliveredAfterMs).toBeLessThanOrEqual(DELIVERED_WITHIN_MS);
      expect(new Set(destination.received.map((request) => request.headers['hooktrail-id'])).size).toBe(
        total,
      );
    } finally {
      await sut?.close();
      await destination.close();
      await redis.stop();
    }
  }, 150_000);
});
