import { Client } from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { api } from '../support/api-client';
import { HttpsDestination } from '../support/https-destination';
import {
  type ServiceProcess,
  type ServiceUnderTest,
  startServiceProcess,
  stopService,
} from '../support/service-process';
import { addDestination, createEndpoint } from '../support/webhook-fixtures';
import { allDelivered, waitForLedger } from './support/ledger';
import { spawnWorker } from './support/processes';
import { acknowledgedIds, captureAtRate } from './support/provider-load';

const EVENTS = 3_000;
/**
 * The only worker is killed this many times, each time as soon as it has moved the replay on (so that it
 * dies holding the replay's job, mid-way), and replaced at once.
 */
const KILLS = 2;
/** A killed worker's replay job is taken over once its lock (15 s) lapses and a stall check runs (5 s). */
const TAKEOVER_MS = 20_000;

describe('reliability: workers killed during a bulk replay', () => {
  it(`replays each of ${EVENTS} events exactly once while the worker running it is SIGKILLed ${KILLS} times mid-way`, async () => {
    const destination = await HttpsDestination.start();
    let sut: ServiceUnderTest | undefined;
    let db: Client | undefined;
    const workers: Promise<ServiceProcess>[] = [];
    const spawn = () => {
      const worker = spawnWorker(sut!.env);
      workers.push(worker);
      return worker;
    };
    try {
      // The service takes the API calls and captures only: the one worker process runs every job.
      sut = await startServiceProcess({ APP_ROLE: 'api' });
      db = new Client({ connectionString: sut.env.DATABASE_URL });
      await db.connect();
      let worker = await spawn();
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut.url, fixture, destination.url);
      const ids = acknowledgedIds(await captureAtRate(fixture.captureUrl, { ratePerS: 500, total: EVENTS }));
      expect(ids).toHaveLength(EVENTS);
      const drainStarted = Date.now();
      expect(await waitForLedger(sut.env.DATABASE_URL, ids, allDelivered, 120_000)).toMatchObject({
        delivered: EVENTS,
      });
      const drainMs = Date.now() - drainStarted;

      const started = await api(sut.url, 'POST', `/api/endpoints/${fixture.endpointId}/bulk-replays`, {
        token: fixture.user.accessToken,
        body: {},
      });
      expect(started.body.bulk_replay).toMatchObject({ status: 'running', total: EVENTS });
      const progress = async () =>
        (
          await api(
            sut!.url,
            'GET',
            `/api/endpoints/${fixture.endpointId}/bulk-replays/${started.body.bulk_replay.id}`,
            {
              token: fixture.user.accessToken,
            },
          )
        ).body.bulk_replay;

      const killedAtDone: number[] = [];
      let lastDone = 0;
      for (let kill = 0; kill < KILLS; kill++) {
        const moved = Date.now() + 2 * TAKEOVER_MS;
        let replay = await progress();
        while (replay.done === lastDone && replay.status === 'running' && Date.now() < moved) {
          await sleep(50);
          replay = await progress();
        }
        worker.child.kill('SIGKILL');
        await worker.exited;
        killedAtDone.push(replay.done);
        lastDone = replay.done;
        worker = await spawn();
      }
      // Once the kills end, the last worker takes the replay over and finishes it.
      const budgetMs = TAKEOVER_MS + 3 * drainMs + 30_000;
      const deadline = Date.now() + budgetMs;
      let replay = await progress();
      while (replay.status === 'running' && Date.now() < deadline) {
        await sleep(500);
        replay = await progress();
      }
      console.log(
        `bulk replay of ${EVENTS} events: ${replay.status}, ${replay.done} done; the worker was killed at ` +
          `${killedAtDone.join(', ')} done; first drain ${drainMs} ms, budget after the kills ${budgetMs} ms`,
      );
      expect(replay).toMatchObject({ status: 'completed', total: EVENTS, done: EVENTS });
      // Each kill came while the replay was running, after the killed worker had moved it on.
      expect(killedAtDone).toHaveLength(KILLS);
      killedAtDone.forEach((done, kill) => {
        expect(done).toBeGreaterThan(kill === 0 ? 0 : killedAtDone[kill - 1]);
        expect(done).toBeLessThan(EVENTS);
      });

      // Every event got exactly one more dispatch: none twice, none skipped.
      const { rows } = await db.query<{ dispatches: number; events: number }>(
        `select dispatches, count(*)::int as events from (
           select event_id, count(distinct dispatch_id)::int as dispatches from deliveries
           where event_id = any($1) group by event_id
         ) per_event group by dispatches`,
        [ids],
      );
      expect(rows).toEqual([{ dispatches: 2, events: EVENTS }]);
      const books = await waitForLedger(sut.env.DATABASE_URL, ids, allDelivered, budgetMs);
      expect(books).toMatchObject({ missing: [], unaccounted: [] });
    } finally {
      await db?.end();
      for (const worker of await Promise.allSettled(workers))
        if (worker.status === 'fulfilled') await stopService(worker.value, 'SIGKILL');
      await sut?.close();
      await destination.close();
    }
  }, 300_000);
});
