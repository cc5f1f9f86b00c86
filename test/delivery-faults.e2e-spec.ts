import { HttpsDestination } from './support/https-destination';
import { ThrowawayRedis } from './support/redis-server';
import { spawnService, startServiceProcess, stopService } from './support/service-process';
import { startTestApp } from './support/test-app';
import {
  addDestination,
  capture,
  createEndpoint,
  getEvent,
  hasStatus,
  waitForEvent,
} from './support/webhook-fixtures';

interface EventWithDeliveries {
  deliveries: { status: string; attempt_count: number; attempts: unknown[] }[];
}

describe('delivery: worker processes', () => {
  it('shares the work of two worker processes without delivering anything twice', async () => {
    const sink = await HttpsDestination.start();
    // The API in a process of its own too: hosted in Jest's, its burst of 200 first captures shares an event
    // loop with the test runner's heap. Late in a CI run that heap held 0.6-1.2 GB (then with a TypeScript
    // program in it), whose collections paused it for up to 450 ms, and a capture not committed 1 s after
    // it arrived got 503 (seen on CI).
    const sut = await startServiceProcess({ APP_ROLE: 'api' });
    const workerEnv = {
      APP_ROLE: 'worker',
      DATABASE_URL: sut.env.DATABASE_URL,
      REDIS_URL: sut.env.REDIS_URL,
      REDIS_PREFIX: sut.env.REDIS_PREFIX,
      DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
      LOG_LEVEL: 'warn',
    };
    const workers = await Promise.all([spawnService(workerEnv), spawnService(workerEnv)]);
    try {
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut.url, fixture, sink.url);
      const eventIds = await Promise.all(
        Array.from({ length: 200 }, (_, n) => capture(fixture, `{"n":${n}}`)),
      );

      await sink.waitForRequests(200, 60_000);
      for (const eventId of eventIds) await waitForEvent(sut.url, fixture, eventId, hasStatus('delivered'));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(sink.received).toHaveLength(200);
      expect(new Set(sink.received.map((request) => request.headers['hooktrail-id'])).size).toBe(200);
    } finally {
      await Promise.all(workers.map((worker) => stopService(worker)));
      await sut.close();
      await sink.close();
    }
  }, 120_000);
});

describe('delivery: nothing is lost', () => {
  it('captures while Redis is down and delivers everything within 30 s of Redis coming back', async () => {
    const redis = await ThrowawayRedis.start();
    const sink = await HttpsDestination.start();
    const sut = await startTestApp({ REDIS_URL: redis.url, DELIVERY_RETRY_DELAYS_MS: '500,500,500,500' });
    try {
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut.url, fixture, sink.url);
      const before = await capture(fixture, '{"n":0}');
      await waitForEvent(sut.url, fixture, before, hasStatus('delivered'));

      await redis.stop();
      const during = [];
      for (let n = 1; n <= 20; n++) during.push(await capture(fixture, `{"n":${n}}`));
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await redis.startServer();
      const restarted = Date.now();

      for (const eventId of during)
        await waitForEvent(sut.url, fixture, eventId, hasStatus('delivered'), 30_000);
      expect(Date.now() - restarted).toBeLessThan(30_000);
      const bodies = new Set(sink.received.map((request) => request.body.toString()));
      for (let n = 0; n <= 20; n++) expect(bodies).toContain(`{"n":${n}}`);
    } finally {
      await sut.close().catch(() => undefined);
      await sink.close();
      await redis.stop();
    }
  }, 90_000);

  it('delivers a job whose worker was killed mid-delivery (at least once, never zero)', async () => {
    let killFirstWorker: () => void = () => undefined;
    const sink = await HttpsDestination.start();
    sink.respondWith((_request, response) => {
      killFirstWorker();
      setTimeout(() => response.end('late'), 500);
    });
    const sut = await startTestApp({ APP_ROLE: 'api', DELIVERY_TIMEOUT_MS: '2000' });
    const workerEnv = {
      APP_ROLE: 'worker',
      DATABASE_URL: sut.env.DATABASE_URL,
      REDIS_URL: sut.env.REDIS_URL,
      REDIS_PREFIX: sut.env.REDIS_PREFIX,
      DELIVERY_TIMEOUT_MS: '2000',
      DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
      LOG_LEVEL: 'warn',
    };
    const first = await spawnService(workerEnv);
    let second: Awaited<ReturnType<typeof spawnService>> | undefined;
    try {
      const killed = new Promise<void>((resolve) => {
        killFirstWorker = () => {
          first.child.kill('SIGKILL');
          resolve();
        };
      });
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut.url, fixture, sink.url);
      const eventId = await capture(fixture);
      await killed;
      expect(await first.exited).toBe('SIGKILL');
      second = await spawnService(workerEnv);

      const event = await waitForEvent(sut.url, fixture, eventId, hasStatus('delivered'), 60_000);
      expect(event.deliveries).toHaveLength(1);
      expect(sink.received.length).toBeGreaterThanOrEqual(2);
      expect(new Set(sink.received.map((request) => request.headers['hooktrail-id'])).size).toBe(1);
    } finally {
      await stopService(first, 'SIGKILL');
      if (second) await stopService(second);
      await sut.close();
      await sink.close();
    }
  }, 120_000);

  it('does not count an attempt cut off by a worker shutdown: no attempt recorded, no retry used, the delivery sent again', async () => {
    const sink = await HttpsDestination.start();
    let stopFirstWorker: () => void = () => undefined;
    // The first request is held unanswered while its worker shuts down (SIGTERM), which cuts it off.
    sink.respondWith(() => stopFirstWorker());
    const sut = await startTestApp({ APP_ROLE: 'api', DELIVERY_RETRY_DELAYS_MS: '60000,60000,60000,60000' });
    const workerEnv = {
      APP_ROLE: 'worker',
      DATABASE_URL: sut.env.DATABASE_URL,
      REDIS_URL: sut.env.REDIS_URL,
      REDIS_PREFIX: sut.env.REDIS_PREFIX,
      DELIVERY_RETRY_DELAYS_MS: '60000,60000,60000,60000',
      DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
      LOG_LEVEL: 'warn',
    };
    const first = await spawnService(workerEnv);
    let second: Awaited<ReturnType<typeof spawnService>> | undefined;
    try {
      const stopped = new Promise<number | string>((resolve) => {
        stopFirstWorker = () => resolve(stopService(first));
      });
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut.url, fixture, sink.url);
      const eventId = await capture(fixture);
      expect(await stopped).toBe(0);
      const cutOff = (await getEvent(sut.url, fixture, eventId)) as EventWithDeliveries;
      expect(cutOff.deliveries[0]).toMatchObject({ status: 'pending', attempt_count: 0, attempts: [] });

      second = await spawnService(workerEnv);
      // Well within the first retry delay (60 s): it was picked up again, not retried on the schedule.
      const event = (await waitForEvent(
        sut.url,
        fixture,
        eventId,
        hasStatus('delivered'),
        30_000,
      )) as EventWithDeliveries;
      expect(sink.received).toHaveLength(2);
      expect(new Set(sink.received.map((request) => request.headers['hooktrail-id'])).size).toBe(1);
      expect(event.deliveries).toHaveLength(1);
      expect(event.deliveries[0]).toMatchObject({
        status: 'delivered',
        attempt_count: 1,
        response_code: 200,
      });
      expect(event.deliveries[0].attempts).toHaveLength(1);
    } finally {
      await stopService(first, 'SIGKILL');
      if (second) await stopService(second);
      await sut.close();
      await sink.close();
    }
  }, 120_000);
});
