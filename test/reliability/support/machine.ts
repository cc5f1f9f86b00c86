import { HttpsDestination } from '../../support/https-destination';
import { addDestination, createEndpoint } from '../../support/webhook-fixtures';
import { acknowledgedIds, captureAtRate, latencyQuantile } from './provider-load';

/** What this machine does right now, measured through the service under test before the fault. */
export interface MachineReading {
  /** Capture answers at a light load (100/s), p99 in ms: what a provider waits for when nothing queues. */
  captureP99Ms: number;
  /** Captures forwarded per second, capture to arrival at the destination, at a moderate load. */
  deliveriesPerS: number;
}

const CALIBRATION_EVENTS = 300;
const CALIBRATION_RATE_PER_S = 300;
/** A service that just started compiles its hot paths and opens its connections: measured apart, first. */
const WARM_UP_EVENTS = 100;
/**
 * The light load's p99 is estimated by the 496th of 500 answer times (latencyQuantile). The number of samples
 * above a true quantile q is Binomial(n, 1 - q), whatever the distribution: with 500, the estimate falls
 * between the true p98 and p99.8 in 97 % of runs (P[Bin(500, 0.02) <= 4] = 3 %, P[Bin(500, 0.002) >= 5] =
 * 0.4 %). With the 50 samples of before, the "p99" was the maximum, one sample: below the true p98 in 36 % of
 * runs (0.98^50) and, when one capture met a pause of the busy machine, that pause; so the answer bound of the
 * fault tests (answerBoundMs) moved with a single sample. 100/s still queues nothing (a capture takes a few ms
 * of the service's CPU) and takes 5 s.
 */
const LIGHT_LOAD_EVENTS = 500;
const LIGHT_LOAD_RATE_PER_S = 100;

/**
 * Measures the service at `baseUrl` on this machine as it is now (its CPU, and whatever else runs on it):
 * after a warm-up, 500 captures at 100/s (the answer time when nothing queues), then 300 captures at 300/s,
 * timed from the first capture to the last arrival; on an endpoint and a destination of their own. The
 * fault tests derive their budgets (how long a drain may take) from it rather than from timings that hold
 * on one machine only. The rate is a lower bound of the service's: it
 * cannot measure more than it was sent.
 */
export async function measureMachine(baseUrl: string): Promise<MachineReading> {
  const destination = await HttpsDestination.start();
  try {
    const fixture = await createEndpoint(baseUrl);
    await addDestination(baseUrl, fixture, destination.url);
    const warmUp = await captureAtRate(fixture.captureUrl, { ratePerS: 100, total: WARM_UP_EVENTS });
    const light = await captureAtRate(fixture.captureUrl, {
      ratePerS: LIGHT_LOAD_RATE_PER_S,
      total: LIGHT_LOAD_EVENTS,
    });
    const warmedUp = acknowledgedIds(warmUp).length + acknowledgedIds(light).length;
    await destination.waitForRequests(warmedUp, 120_000);
    const started = Date.now();
    const results = await captureAtRate(fixture.captureUrl, {
      ratePerS: CALIBRATION_RATE_PER_S,
      total: CALIBRATION_EVENTS,
    });
    const stored = acknowledgedIds(results).length;
    const arrivals = await destination.waitForRequests(warmedUp + stored, 120_000);
    const lastArrival = Math.max(...arrivals.map((request) => request.at));
    const reading = {
      captureP99Ms: latencyQuantile(light, 0.99),
      deliveriesPerS: Math.round((stored * 1000) / Math.max(1, lastArrival - started)),
    };
    console.log(`machine: ${JSON.stringify(reading)}`);
    return reading;
  } finally {
    await destination.close();
  }
}
