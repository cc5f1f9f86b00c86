import { setTimeout as sleep } from 'node:timers/promises';
import { api } from '../support/api-client';
import { HttpsDestination, type Responder } from '../support/https-destination';
import { ThrowawayRedis } from '../support/redis-server';
import {
  type ServiceProcess,
  type ServiceUnderTest,
  startServiceProcess,
  stopService,
} from '../support/service-process';
import { capture, createEndpoint, type EndpointFixture } from '../support/webhook-fixtures';
import { allDelivered, deliveryStatusCounts, waitForLedger } from './support/ledger';
import { spawnWorker } from './support/processes';

const TIMEOUT_MS = 2_000;
/**
 * A killed worker's pump is taken over once its job's lock lapses (15 s) and a stall check runs (5 s);
 * its in-flight permit lapses after DELIVERY_TIMEOUT_MS + 10 s.
 */
const TAKEOVER_MS = 15_000 + 5_000 + TIMEOUT_MS + 10_000;
/** The sweeper looks every 5 s for deliveries 10 s overdue whose job is gone (delivery-sweeper.service.ts). */
const SWEEPER_LAG_MS = 15_000;

/** Records the order of the `n` each request carries (and the open requests); answers 200 after 50-150 ms. */
function orderRecorder() {
  const order: number[] = [];
  let open = 0;
  let most = 0;
  const responder: Responder = (request, response) => {
    order.push((JSON.parse(request.body.toString()) as { n: number }).n);
    most = Math.max(most, ++open);
    setTimeout(
      () => {
        open--;
        response.writeHead(200).end('ok');
      },
      50 + Math.random() * 100,
    );
  };
  return { responder, order, mostOpen: () => most, openNow: () => open };
}

/** The order in which each `n` first arrived (a re-sent one counts where it first came). */
function firstArrivals(order: readonly number[]): number[] {
  return [...new Set(order)];
}

async function addDestination(sut: ServiceUnderTest, fixture: EndpointFixture, body: object) {
  const created = await api(sut.url, 'POST', `/api/endpoints/${fixture.endpointId}/destinations`, {
    token: fixture.user.accessToken,
    body,
  });
  expect(created.status).toBe(201);
  return `/api/endpoints/${fixture.endpointId}/destinations/${created.body.destination.id}`;
}

const range = (count: number) => Array.from({ length: count }, (_, n) => n);

describe('reliability: flow control through faults', () => {
  it('keeps FIFO order and loses nothing when every worker is SIGKILLed mid-attempt during a FIFO drain', async () => {
    const EVENTS = 120;
    const recorder = orderRecorder();
    const destination = await HttpsDestination.start(recorder.responder);
    let sut: ServiceUnderTest | undefined;
    const workers: ServiceProcess[] = [];
    try {
      sut = await startServiceProcess({ APP_ROLE: 'api', DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS) });
      const spawn = async () => {
        const worker = await spawnWorker(sut!.env);
        workers.push(worker);
        return worker;
      };
      const victims = await Promise.all([spawn(), spawn()]);
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut, fixture, { url: destination.url, ordering: 'fifo' });
      const ids: string[] = [];
      for (const n of range(EVENTS)) ids.push(await capture(fixture, `{"n":${n}}`));

      // A third of the way in, with an attempt open at the destination, both workers die at once.
      while (recorder.order.length < EVENTS / 3 || recorder.openNow() === 0) await sleep(5);
      for (const victim of victims) victim.child.kill('SIGKILL');
      await Promise.all(victims.map((victim) => victim.exited));
      const killedAfter = recorder.order.length;
      const killedAt = Date.now();
      await spawn();

      const books = await waitForLedger(sut.env.DATABASE_URL, ids, allDelivered, TAKEOVER_MS + 30_000);
      const resumedMs = Date.now() - killedAt;
      await sleep(500); // a late duplicate would show up now
      console.log(
        `FIFO drain: both workers SIGKILLed after ${killedAfter} requests; all ${EVENTS} delivered ${resumedMs} ms ` +
          `later by a new worker; ${recorder.order.length} requests (${recorder.order.length - EVENTS} re-sent), ` +
          `at most ${recorder.mostOpen()} open at once`,
      );
      expect(books).toMatchObject({ acknowledged: EVENTS, delivered: EVENTS, missing: [], unaccounted: [] });
      expect(firstArrivals(recorder.order)).toEqual(range(EVENTS));
      // Only the attempt cut off by the kill can have been sent twice, right before the next one.
      expect(recorder.order.length - EVENTS).toBeLessThanOrEqual(1);
      expect(recorder.mostOpen()).toBe(1);
      expect(await deliveryStatusCounts(sut.env.DATABASE_URL, ids)).toEqual({ delivered: EVENTS });
    } finally {
      for (const worker of workers) await stopService(worker, 'SIGKILL');
      await sut?.close();
      await destination.close();
    }
  }, 120_000);

  it('loses nothing of a paused backlog when Redis restarts empty, resumed while it is down: FIFO in order', async () => {
    const EVENTS = 100;
    const redis = await ThrowawayRedis.start();
    const fifo = orderRecorder();
    const parallel = orderRecorder();
    const fifoDestination = await HttpsDestination.start(fifo.responder);
    const parallelDestination = await HttpsDestination.start(parallel.responder);
    let sut: ServiceUnderTest | undefined;
    try {
      sut = await startServiceProcess({ REDIS_URL: redis.url });
      const fixture = await createEndpoint(sut.url);
      const paths = [
        await addDestination(sut, fixture, { url: fifoDestination.url, ordering: 'fifo', paused: true }),
        await addDestination(sut, fixture, { url: parallelDestination.url, paused: true }),
      ];
      const ids: string[] = [];
      for (const n of range(EVENTS)) ids.push(await capture(fixture, `{"n":${n}}`));
      await sleep(1000);
      expect(fifo.order.length + parallel.order.length).toBe(0);

      // Redis goes (and comes back with nothing: no job, no pump, no permit); the destinations are
      // resumed meanwhile, which the API accepts although it cannot enqueue anything yet.
      await redis.stop();
      for (const path of paths) {
        const resumed = await api(sut.url, 'PATCH', path, {
          token: fixture.user.accessToken,
          body: { paused: false },
        });
        expect(resumed.status).toBe(200);
      }
      await sleep(2000);
      await redis.startServer();
      const back = Date.now();

      await fifoDestination.waitForRequests(EVENTS, SWEEPER_LAG_MS + 30_000);
      await parallelDestination.waitForRequests(EVENTS, SWEEPER_LAG_MS + 30_000);
      const books = await waitForLedger(sut.env.DATABASE_URL, ids, allDelivered, 10_000);
      // The last answers are being recorded: wait for them.
      let counts = await deliveryStatusCounts(sut.env.DATABASE_URL, ids);
      for (let tries = 0; tries < 50 && counts.delivered !== 2 * EVENTS; tries++) {
        await sleep(100);
        counts = await deliveryStatusCounts(sut.env.DATABASE_URL, ids);
      }
      console.log(
        `paused backlog through a Redis restart: ${EVENTS} events delivered to both destinations ` +
          `${Date.now() - back} ms after Redis returned`,
      );
      expect(books).toMatchObject({ acknowledged: EVENTS, delivered: EVENTS, missing: [], unaccounted: [] });
      expect(fifo.order).toEqual(range(EVENTS));
      expect([...parallel.order].sort((a, b) => a - b)).toEqual(range(EVENTS));
      expect(counts).toEqual({ delivered: 2 * EVENTS });
    } finally {
      await sut?.close();
      await fifoDestination.close();
      await parallelDestination.close();
      await redis.stop();
    }
  }, 120_000);
});
