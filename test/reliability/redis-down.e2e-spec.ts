import { setTimeout as sleep } from 'node:timers/promises';
import { api } from '../support/api-client';
import { HttpsDestination } from '../support/https-destination';
import { ThrowawayRedis } from '../support/redis-server';
import { type ServiceUnderTest, startServiceProcess } from '../support/service-process';
import { addDestination, createEndpoint } from '../support/webhook-fixtures';
import { allDelivered, duplicateCount, waitForLedger } from './support/ledger';
import { measureMachine } from './support/machine';
import {
  acknowledgedIds,
  answerBoundMs,
  brokenAnswers,
  latencyQuantile,
  type ProviderLoad,
  startLoad,
  statusCounts,
} from './support/provider-load';

const RATE_PER_S = 200;
const BEFORE_MS = 3_000;
const OUTAGE_MS = 20_000;
const AFTER_MS = 2_000;
/** The sweeper looks every 5 s for deliveries 10 s overdue whose job is gone (delivery-sweeper.service.ts). */
const SWEEPER_LAG_MS = 15_000;

describe('reliability: Redis down under load', () => {
  it(`takes every capture at ${RATE_PER_S}/s through a ${OUTAGE_MS / 1000} s Redis outage, each answered in time, and delivers all of them once it is back`, async () => {
    const redis = await ThrowawayRedis.start();
    const destination = await HttpsDestination.start();
    let sut: ServiceUnderTest | undefined;
    let load: ProviderLoad | undefined;
    try {
      sut = await startServiceProcess({
        REDIS_URL: redis.url,
        DELIVERY_RETRY_DELAYS_MS: '1000,1000,1000,1000',
        // Limits far above the load: counted in Redis, and in the process while Redis is away.
        CAPTURE_RATE_LIMIT_PER_S: '100000',
        AUTH_RATE_LIMIT_PER_MIN: '100000',
      });
      const machine = await measureMachine(sut.url);
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut.url, fixture, destination.url);

      const total = (RATE_PER_S * (BEFORE_MS + OUTAGE_MS + AFTER_MS)) / 1000;
      // Once Redis is back, the outage's backlog waits for the sweeper, then drains at the machine's pace.
      const drainBudgetMs = SWEEPER_LAG_MS + (3 * 1000 * total) / machine.deliveriesPerS;
      load = startLoad(fixture.captureUrl, { ratePerS: RATE_PER_S, total });
      await sleep(BEFORE_MS);
      await redis.stop();
      const down = Date.now();
      await sleep(1000);
      const login = await api(sut.url, 'POST', '/api/auth/login', {
        body: { email: 'nobody@example.com', password: 'wrong password' },
      });
      await sleep(OUTAGE_MS - (Date.now() - down));
      await redis.startServer();
      const back = Date.now();
      const results = await load.results;

      const ids = acknowledgedIds(results);
      const books = await waitForLedger(sut.env.DATABASE_URL, ids, allDelivered, drainBudgetMs);
      const deliveredAfterMs = Date.now() - back;
      const duringOutage = results.filter((result) => result.sentAt >= down && result.sentAt < back);
      const bound = answerBoundMs(sut.env.CAPTURE_TIMEOUT_MS, machine.captureP99Ms);
      console.log(
        `Redis down ${back - down} ms; captures ${JSON.stringify(statusCounts(results))}, ` +
          `${duringOutage.length} during the outage (p99 answer ${latencyQuantile(duringOutage, 0.99)} ms, ` +
          `max ${latencyQuantile(duringOutage, 1)} ms; bound ${bound} ms); all delivered ${deliveredAfterMs} ms ` +
          `after Redis returned (budget ${Math.round(drainBudgetMs)} ms); destination got ${destination.received.length} ` +
          `requests, ${duplicateCount(destination.received)} duplicates; ` +
          `ledger ${JSON.stringify({ ...books, missing: books.missing.length, unaccounted: books.unaccounted.length })}`,
      );

      // The auth limit counts in the process while Redis is away: a login is answered, not failed.
      expect(login.status).toBe(401);
      expect(brokenAnswers(results, bound)).toEqual([]);
      // A Redis outage refuses no capture: every one is stored.
      expect(statusCounts(results)).toEqual({ 200: total });
      expect(duringOutage.length).toBeGreaterThanOrEqual((RATE_PER_S * OUTAGE_MS) / 1000 - RATE_PER_S);
      expect(books).toMatchObject({
        acknowledged: total,
        stored: total,
        delivered: total,
        missing: [],
        unaccounted: [],
      });
      expect(deliveredAfterMs).toBeLessThanOrEqual(drainBudgetMs);
      expect(new Set(destination.received.map((request) => request.headers['hooktrail-id'])).size).toBe(
        total,
      );
    } finally {
      // A step that failed mid-load leaves the sender going: stop it before the service goes away.
      load?.stop();
      await load?.results.catch(() => undefined);
      await sut?.close();
      await destination.close();
      await redis.stop();
    }
  }, 240_000);
});
