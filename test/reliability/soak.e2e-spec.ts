import { setTimeout as sleep } from 'node:timers/promises';
import { answer, HttpsDestination, type Responder } from '../support/https-destination';
import { type ServiceUnderTest, startServiceProcess } from '../support/service-process';
import { addDestination, createEndpoint } from '../support/webhook-fixtures';
import { ledger } from './support/ledger';
import { measureMachine } from './support/machine';
import { mebibytes, residentBytes } from './support/processes';
import {
  acknowledgedIds,
  answerBoundMs,
  brokenAnswers,
  captureAtRate,
  latencyQuantile,
  statusCounts,
} from './support/provider-load';

/** `npm run test:soak` (SOAK=1): ten minutes at 300/s. Otherwise a short run of the same test. */
const SOAK = process.env.SOAK === '1';
const DURATION_S = SOAK ? 600 : 20;
const RATE_PER_S = SOAK ? 300 : 100;
/** RSS is compared between this point and the end (after the first minute of the soak). */
const FIRST_SAMPLE_S = SOAK ? 60 : 5;
const RSS_GROWTH_LIMIT = 0.1;

const slow: Responder = (_request, response) =>
  setTimeout(() => response.writeHead(200).end('slow ok'), 2000);

/** Lines of the service's output at level error or above (or not JSON: a crash, a stray print). */
function errorLines(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .filter((line) => {
      try {
        return (JSON.parse(line) as { level?: number }).level! >= 50;
      } catch {
        return true;
      }
    });
}

describe(`reliability: soak, ${DURATION_S} s at ${RATE_PER_S} captures/s to a fast, a slow and a failing destination`, () => {
  it(
    'loses nothing, keeps its memory flat and logs no error but the failing destination’s',
    async () => {
      const fast = await HttpsDestination.start();
      const slowDestination = await HttpsDestination.start(slow);
      const failing = await HttpsDestination.start(answer(500, 'down for maintenance'));
      let sut: ServiceUnderTest | undefined;
      try {
        sut = await startServiceProcess();
        const machine = await measureMachine(sut.url);
        const fixture = await createEndpoint(sut.url);
        for (const destination of [fast, slowDestination, failing])
          await addDestination(sut.url, fixture, destination.url);

        const pid = sut.process.child.pid!;
        let firstRss = 0;
        const sampling = sleep(FIRST_SAMPLE_S * 1000).then(() => (firstRss = residentBytes(pid)));
        const results = await captureAtRate(fixture.captureUrl, {
          ratePerS: RATE_PER_S,
          total: RATE_PER_S * DURATION_S,
          bodyTemplate: JSON.stringify({ type: 'invoice.paid', n: '%n', padding: 'x'.repeat(512) }),
        });
        await sampling;
        const lastRss = residentBytes(pid);
        await sleep(5000); // let the in-flight attempts finish before the books are read
        const books = await ledger(sut.env.DATABASE_URL, acknowledgedIds(results));
        const errors = errorLines(sut.process.output()).filter((line) => !line.includes(failing.url));
        const growth = (lastRss - firstRss) / firstRss;
        const bound = answerBoundMs(sut.env.CAPTURE_TIMEOUT_MS, machine.captureP99Ms);
        console.log(
          `soak ${DURATION_S} s at ${RATE_PER_S}/s: captures ${JSON.stringify(statusCounts(results))}, ` +
            `p50 ${latencyQuantile(results, 0.5)} ms, p99 ${latencyQuantile(results, 0.99)} ms, ` +
            `max ${latencyQuantile(results, 1)} ms (bound ${bound} ms); ` +
            `ledger ${JSON.stringify({ ...books, missing: books.missing.length, unaccounted: books.unaccounted.length })}; ` +
            `destinations: fast ${fast.received.length}, slow ${slowDestination.received.length}, failing ${failing.received.length}; ` +
            `service RSS ${mebibytes(firstRss)} MiB at ${FIRST_SAMPLE_S} s, ${mebibytes(lastRss)} MiB at the end ` +
            `(${(growth * 100).toFixed(1)} %); error lines ${errors.length}`,
        );

        expect(brokenAnswers(results, bound)).toEqual([]);
        expect(statusCounts(results)).toEqual({ 200: RATE_PER_S * DURATION_S });
        expect(books).toMatchObject({ stored: books.acknowledged, missing: [], unaccounted: [] });
        expect(books.delivered).toBeGreaterThan(0);
        expect(failing.received.length).toBeGreaterThan(0);
        expect(errors).toEqual([]);
        // Memory is judged after the warm-up minute of the soak; the short run is too short to tell.
        if (SOAK) expect(growth).toBeLessThanOrEqual(RSS_GROWTH_LIMIT);
      } finally {
        await sut?.close();
        for (const destination of [fast, slowDestination, failing]) await destination.close();
      }
    },
    (DURATION_S + 120) * 1000,
  );
});
