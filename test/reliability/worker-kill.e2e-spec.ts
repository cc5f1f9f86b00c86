import { setTimeout as sleep } from 'node:timers/promises';
import { HttpsDestination, type Responder } from '../support/https-destination';
import { type ServiceProcess, stopService } from '../support/service-process';
import { startTestApp, type TestApp } from '../support/test-app';
import { addDestination, createEndpoint } from '../support/webhook-fixtures';
import {
  acknowledgedIds,
  allDelivered,
  captureAtRate,
  duplicateCount,
  deliveryStatusCounts,
  requestErrors,
  statusCounts,
  waitForLedger,
} from './support/ledger';
import { spawnWorker } from './support/processes';

const EVENTS = 2_000;
/** A victim worker is killed this often (while one is up); the survivor, the test's own service, never. */
const KILL_EVERY_MS = 2_500;
/** Victims started side by side, so that the next kill does not wait for a replacement to boot. */
const VICTIMS = 2;
const TIMEOUT_MS = 2_000;

/** Answers 200 after 0.2 to 1 s: deliveries are in flight when a worker dies. */
const slowOk: Responder = (_request, response) =>
  setTimeout(() => response.writeHead(200).end('ok'), 200 + Math.random() * 800);

describe('reliability: workers killed during a drain', () => {
  it(`delivers all ${EVENTS} events while a worker is SIGKILLed every ${KILL_EVERY_MS / 1000} s and another keeps running`, async () => {
    const destination = await HttpsDestination.start(slowOk);
    let sut: TestApp | undefined;
    const workers: Promise<ServiceProcess>[] = [];
    const spawn = () => {
      const worker = spawnWorker(sut!.env);
      workers.push(worker);
      return worker;
    };
    try {
      // The test's own service (APP_ROLE=all) takes the captures and is the worker that keeps running.
      sut = await startTestApp({ DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS) });
      const victims = await Promise.all(Array.from({ length: VICTIMS }, spawn));
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut.url, fixture, destination.url);
      const drainStarted = Date.now();
      const killedAt: number[] = [];
      let drained = false;
      let booting = false;
      const killing = (async () => {
        while (!drained) {
          await sleep(KILL_EVERY_MS);
          const victim = victims.shift();
          if (drained || !victim) continue;
          victim.child.kill('SIGKILL');
          await victim.exited;
          killedAt.push(Date.now() - drainStarted);
          // One replacement boots at a time: booting takes seconds of CPU the drain needs.
          if (!booting) {
            booting = true;
            void spawn()
              .then(
                (replacement) => victims.push(replacement),
                () => undefined,
              )
              .finally(() => (booting = false));
          }
        }
      })();
      const results = await captureAtRate(fixture.captureUrl, { ratePerS: 200, total: EVENTS });
      const ids = acknowledgedIds(results);
      const books = await waitForLedger(sut.env.DATABASE_URL, ids, allDelivered, 120_000);
      const drainMs = Date.now() - drainStarted;
      drained = true;
      await killing;
      await sleep(1000); // a late duplicate would show up now
      const unique = new Set(destination.received.map((request) => request.headers['hooktrail-id'])).size;
      console.log(
        `drained ${books.delivered}/${EVENTS} in ${drainMs} ms; ${killedAt.length} workers SIGKILLed at ` +
          `${killedAt.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(', ')}; destination got ` +
          `${destination.received.length} requests for ${unique} deliveries: ${duplicateCount(destination.received)} duplicates; ` +
          `captures ${JSON.stringify(statusCounts(results))} ${requestErrors(results).join(', ')}`,
      );

      expect(statusCounts(results)).toEqual({ 200: EVENTS });
      expect(killedAt.length).toBeGreaterThanOrEqual(2);
      expect(books).toMatchObject({ acknowledged: EVENTS, delivered: EVENTS, missing: [], unaccounted: [] });
      expect(unique).toBe(EVENTS);
      // Each event has its one delivery, recorded delivered however often it was sent.
      expect(await deliveryStatusCounts(sut.env.DATABASE_URL, ids)).toEqual({ delivered: EVENTS });
    } finally {
      const started = await Promise.allSettled(workers);
      for (const worker of started)
        if (worker.status === 'fulfilled') await stopService(worker.value, 'SIGKILL');
      await sut?.close();
      await destination.close();
    }
  }, 240_000);
});
