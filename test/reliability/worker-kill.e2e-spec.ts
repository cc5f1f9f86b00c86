import { setTimeout as sleep } from 'node:timers/promises';
import { HttpsDestination, type Responder } from '../support/https-destination';
import {
  type ServiceProcess,
  type ServiceUnderTest,
  startServiceProcess,
  stopService,
} from '../support/service-process';
import { addDestination, createEndpoint } from '../support/webhook-fixtures';
import { allDelivered, deliveryStatusCounts, duplicateCount, waitForLedger } from './support/ledger';
import { measureMachine } from './support/machine';
import { spawnWorker } from './support/processes';
import {
  acknowledgedIds,
  answerBoundMs,
  brokenAnswers,
  latencyQuantile,
  requestErrors,
  startLoad,
  statusCounts,
} from './support/provider-load';

const EVENTS = 2_000;
const RATE_PER_S = 200;
/**
 * A victim worker is killed this often, or, where booting one takes longer than half of that, every two
 * boot times: replacements then keep up and booting takes at most half a core from the drain.
 */
const KILL_EVERY_MS = 2_500;
/**
 * Kills stop this long (or three kill intervals) after the drain starts. A job a killed worker held is
 * taken over TAKEOVER_MS later, possibly by a victim that is killed in turn: only once the kills end is
 * the drain's time bounded.
 */
const KILL_WINDOW_MS = 30_000;
/** Victims started side by side, so that the next kill does not wait for a replacement to boot. */
const VICTIMS = 2;
const TIMEOUT_MS = 2_000;
/** A killed worker's jobs are taken over once their lock lapses (DELIVERY_TIMEOUT_MS + 20 s) and a stall check runs. */
const TAKEOVER_MS = TIMEOUT_MS + 20_000 + 5_000;

/** Answers 200 after 0.2 to 1 s: deliveries are in flight when a worker dies. */
const slowOk: Responder = (_request, response) =>
  setTimeout(() => response.writeHead(200).end('ok'), 200 + Math.random() * 800);

describe('reliability: workers killed during a drain', () => {
  it(`delivers all ${EVENTS} events while a worker is SIGKILLed every ${KILL_EVERY_MS / 1000} s for ${KILL_WINDOW_MS / 1000} s and another keeps running, answering every capture in time`, async () => {
    const destination = await HttpsDestination.start(slowOk);
    let sut: ServiceUnderTest | undefined;
    const workers: Promise<ServiceProcess>[] = [];
    const spawn = () => {
      const worker = spawnWorker(sut!.env, { DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS) });
      workers.push(worker);
      return worker;
    };
    try {
      // The test's own service (APP_ROLE=all) takes the captures and is the worker that keeps running.
      sut = await startServiceProcess({ DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS) });
      const machine = await measureMachine(sut.url);
      const booting = Date.now();
      const victims = await Promise.all(Array.from({ length: VICTIMS }, spawn));
      const bootMs = Date.now() - booting;
      const killEveryMs = Math.max(KILL_EVERY_MS, 2 * bootMs);
      const killWindowMs = Math.max(KILL_WINDOW_MS, 3 * killEveryMs);
      const drainBudgetMs = killWindowMs + TAKEOVER_MS + (3 * 1000 * EVENTS) / machine.deliveriesPerS;
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut.url, fixture, destination.url);
      const drainStarted = Date.now();
      const killedAt: number[] = [];
      let drained = false;
      let replacing = false;
      const killing = (async () => {
        while (!drained && Date.now() - drainStarted + killEveryMs <= killWindowMs) {
          await sleep(killEveryMs);
          const victim = victims.shift();
          if (drained || !victim) continue;
          victim.child.kill('SIGKILL');
          await victim.exited;
          killedAt.push(Date.now() - drainStarted);
          // One replacement boots at a time: booting takes CPU the drain needs.
          if (!replacing) {
            replacing = true;
            void spawn()
              .then(
                (replacement) => victims.push(replacement),
                () => undefined,
              )
              .finally(() => (replacing = false));
          }
        }
      })();
      const results = await startLoad(fixture.captureUrl, { ratePerS: RATE_PER_S, total: EVENTS }).results;
      const ids = acknowledgedIds(results);
      const books = await waitForLedger(sut.env.DATABASE_URL, ids, allDelivered, drainBudgetMs);
      const drainMs = Date.now() - drainStarted;
      drained = true;
      await killing;
      await sleep(1000); // a late duplicate would show up now
      const unique = new Set(destination.received.map((request) => request.headers['hooktrail-id'])).size;
      const bound = answerBoundMs(sut.env.CAPTURE_TIMEOUT_MS, machine.captureP99Ms);
      console.log(
        `drained ${books.delivered}/${EVENTS} in ${drainMs} ms (budget ${Math.round(drainBudgetMs)} ms); workers booted in ` +
          `${bootMs} ms, killed every ${killEveryMs} ms: ${killedAt.length} SIGKILLed at ` +
          `${killedAt.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(', ')}; destination got ` +
          `${destination.received.length} requests for ${unique} deliveries: ${duplicateCount(destination.received)} duplicates; ` +
          `captures ${JSON.stringify(statusCounts(results))}, p99 ${latencyQuantile(results, 0.99)} ms, ` +
          `max ${latencyQuantile(results, 1)} ms (bound ${bound} ms) ${requestErrors(results).join(', ')}`,
      );

      expect(brokenAnswers(results, bound)).toEqual([]);
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
  }, 300_000);
});
