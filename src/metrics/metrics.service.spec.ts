import type { ConfigService } from '@nestjs/config';
import type { Job, JobCounts, Queue } from 'bull';
import type { Environment } from '../config/environment';
import type { DeliveryJob } from '../jobs/delivery-jobs';
import { captureOutcomeOf, dueSince, Metrics } from './metrics.service';

const DELAYS = [5000, 25000, 120000, 600000];

/** A collaborator stub with only the members the test needs. */
const stub = <T>(members: Partial<T>): T => members as T;

const config = stub<ConfigService<Environment, true>>({
  get: ((name: string) => (name === 'DELIVERY_RETRY_DELAYS_MS' ? DELAYS : undefined)) as never,
});

function queueWith(counts: Partial<JobCounts>, next?: Partial<Job<DeliveryJob>>): Queue<DeliveryJob> {
  return stub<Queue<DeliveryJob>>({
    getJobCounts: async () => ({ waiting: 0, active: 0, completed: 0, failed: 0, delayed: 0, ...counts }),
    getWaiting: async () => (next ? [next as Job<DeliveryJob>] : []),
  });
}

/** The value of one sample line of the exposition, e.g. `hooktrail_captures_total{outcome="stored"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe(Metrics.name, () => {
  it('counts captures and attempts by outcome, every outcome present from the start', async () => {
    const sut = new Metrics(queueWith({}), config, true);
    sut.capture('stored', 0.004);
    sut.capture('stored', 0.02);
    sut.capture('too_large', 0.001);
    sut.attempt('delivered', 0.12);
    sut.attempt('failed', 10);

    const text = await sut.scrape();

    expect(sample(text, 'hooktrail_captures_total{outcome="stored"}')).toBe(2);
    expect(sample(text, 'hooktrail_captures_total{outcome="too_large"}')).toBe(1);
    expect(sample(text, 'hooktrail_captures_total{outcome="unavailable"}')).toBe(0);
    expect(sample(text, 'hooktrail_capture_duration_seconds_bucket{le="0.005",outcome="stored"}')).toBe(1);
    expect(sample(text, 'hooktrail_capture_duration_seconds_count{outcome="stored"}')).toBe(2);
    expect(sample(text, 'hooktrail_delivery_attempts_total{outcome="dead_letter"}')).toBe(0);
    expect(
      sample(text, 'hooktrail_delivery_attempt_duration_seconds_bucket{le="0.25",outcome="delivered"}'),
    ).toBe(1);
    expect(sample(text, 'hooktrail_delivery_attempt_duration_seconds_count{outcome="failed"}')).toBe(1);
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });

  it("leaves Node's own metrics out when the process reports them elsewhere", async () => {
    const text = await new Metrics(queueWith({}), config, false).scrape();

    expect(text).toContain('# TYPE hooktrail_captures_total ');
    expect(text).not.toMatch(/^# TYPE (nodejs|process)_/m);
  });

  it('reads the queue depth and how long its next waiting job has been due on each scrape', async () => {
    const now = Date.now();
    const sut = new Metrics(
      queueWith(
        { waiting: 7, delayed: 2, active: 3 },
        { timestamp: now - 4000, attemptsMade: 0, opts: { delay: 0 } },
      ),
      config,
      false,
    );

    const text = await sut.scrape();

    expect(sample(text, 'hooktrail_delivery_queue_jobs{state="waiting"}')).toBe(7);
    expect(sample(text, 'hooktrail_delivery_queue_jobs{state="delayed"}')).toBe(2);
    expect(sample(text, 'hooktrail_delivery_queue_jobs{state="active"}')).toBe(3);
    expect(sample(text, 'hooktrail_delivery_queue_oldest_waiting_seconds')).toBeGreaterThanOrEqual(4);
    expect(sample(text, 'hooktrail_delivery_queue_oldest_waiting_seconds')).toBeLessThan(60);
  });

  it('leaves the queue figures out, and still answers, when Redis fails', async () => {
    const failing = stub<Queue<DeliveryJob>>({
      getJobCounts: () => Promise.reject(new Error('connection refused')),
      getWaiting: () => Promise.reject(new Error('connection refused')),
    });
    const sut = new Metrics(failing, config, false);

    const text = await sut.scrape();

    expect(text).toContain('hooktrail_captures_total');
    expect(text).not.toContain('hooktrail_delivery_queue_jobs{');
  });
});

describe('captureOutcomeOf', () => {
  it.each([
    [200, 'stored'],
    [404, 'not_found'],
    [403, 'inactive'],
    [413, 'too_large'],
    [429, 'rate_limited'],
    [503, 'unavailable'],
    [500, 'error'],
  ])('maps %i to %s', (statusCode, outcome) => expect(captureOutcomeOf(statusCode)).toBe(outcome));
});

describe('dueSince', () => {
  it('is the time a first attempt was added, plus its delay', () => {
    expect(dueSince({ timestamp: 1000, attemptsMade: 0, opts: { delay: 500 } }, DELAYS)).toBe(1500);
  });

  it("is a retry's previous attempt plus the schedule's delay, continuing a re-enqueued schedule", () => {
    const retry = { timestamp: 1000, attemptsMade: 2, processedOn: 50_000, opts: { delay: 0 } };
    expect(dueSince(retry, DELAYS)).toBe(75_000);
    const resumed = {
      ...retry,
      attemptsMade: 1,
      opts: { delay: 0, backoff: { type: 'x', options: { priorAttempts: 2 } } },
    };
    expect(dueSince(resumed, DELAYS)).toBe(170_000);
  });
});
