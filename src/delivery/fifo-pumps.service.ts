import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Queue } from 'bull';
import type Redis from 'ioredis';
import type { Environment } from '../config/environment';
import { FIFO_PUMP_QUEUE, type FifoPumpJob } from '../jobs/fifo-pump-jobs';
import { REDIS } from '../redis/redis.module';

/** A pump's job that fails unexpectedly (PostgreSQL away, say) runs again after this, until it gets through. */
const PUMP_RETRY_MS = 5000;
const PUMP_JOB_OPTIONS = {
  attempts: 1_000_000,
  backoff: { type: 'fixed', delay: PUMP_RETRY_MS },
  removeOnComplete: true,
  removeOnFail: true,
};
/** The pump flag outlives a pump's longest step (an attempt and its record) by this much. */
const LEASE_GRACE_MS = 20_000;

/** Wake: one more reason to look; start a pump unless one is on (its flag set). Answers 1: start one. */
const WAKE = `
redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1]) then return 1 end
return 0
`;

/** Sleep: the pump stops (its flag goes) only if nothing woke it since it last looked. Answers 1: stopped. */
const SLEEP = `
if (redis.call('GET', KEYS[1]) or '0') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
return 1
`;

type PumpRedis = Redis & {
  fifoWake(wanted: string, pump: string, leaseMs: number): Promise<number>;
  fifoSleep(wanted: string, pump: string, seen: string): Promise<number>;
};

/**
 * The pumps of FIFO destinations (`ordering: fifo`). Each FIFO destination has at most one pump: a job of
 * FIFO_PUMP_QUEUE that sends the destination's oldest waiting delivery, then the next, and so on (see
 * FifoPumpWorker). Two Redis keys per destination keep it single and never asleep while work waits:
 * - `pump`, a flag with a lease, is set while a pump runs or is scheduled; `wake` starts a pump only when
 *   it can set the flag.
 * - `wanted`, a counter, goes up on every wake. A pump reads it before it looks for the next delivery in
 *   PostgreSQL, and when it finds none it stops only if the counter has not moved: a delivery that committed
 *   after its look has woken it since, so it looks again instead (no lost wake-up).
 * A pump lost with Redis's data, or whose worker died after its lease, is started again by the next wake
 * (new deliveries, the sweeper finding the destination's oldest delivery overdue, a resume).
 */
@Injectable()
export class FifoPumps {
  private readonly redis: PumpRedis;
  private readonly prefix: string;
  private readonly leaseMs: number;

  constructor(
    @InjectQueue(FIFO_PUMP_QUEUE) private readonly queue: Queue<FifoPumpJob>,
    @Inject(REDIS) redis: Redis,
    config: ConfigService<Environment, true>,
  ) {
    redis.defineCommand('fifoWake', { numberOfKeys: 2, lua: WAKE });
    redis.defineCommand('fifoSleep', { numberOfKeys: 2, lua: SLEEP });
    this.redis = redis as PumpRedis;
    this.prefix = `${config.get('REDIS_PREFIX', { infer: true })}:fifo`;
    this.leaseMs = config.get('DELIVERY_TIMEOUT_MS', { infer: true }) + LEASE_GRACE_MS;
  }

  /** There may be a delivery to send: starts the destination's pump unless it has one. */
  async wake(destinationId: string): Promise<void> {
    const start = await this.redis.fifoWake(
      this.wantedKey(destinationId),
      this.pumpKey(destinationId),
      this.leaseMs,
    );
    if (start === 1) await this.queue.add({ destinationId }, PUMP_JOB_OPTIONS);
  }

  /** A pump is about to look for the next delivery: renews its flag, and answers the wake count it saw. */
  async look(destinationId: string): Promise<string> {
    const [[, seen]] = (await this.redis
      .multi()
      .get(this.wantedKey(destinationId))
      .set(this.pumpKey(destinationId), '1', 'PX', this.leaseMs)
      .exec()) as [[Error | null, string | null], unknown];
    return seen ?? '0';
  }

  /** The pump found nothing to send: true when it may stop, false when it was woken since it looked. */
  async sleep(destinationId: string, seen: string): Promise<boolean> {
    return (
      (await this.redis.fifoSleep(this.wantedKey(destinationId), this.pumpKey(destinationId), seen)) === 1
    );
  }

  /** The pump must wait (a retry's delay, a rate slot): it runs again after `delayMs`, keeping its flag. */
  async resumeAfter(destinationId: string, delayMs: number): Promise<void> {
    await this.redis.set(this.pumpKey(destinationId), '1', 'PX', delayMs + this.leaseMs);
    await this.queue.add({ destinationId }, { ...PUMP_JOB_OPTIONS, delay: delayMs });
  }

  private wantedKey(destinationId: string): string {
    return `${this.prefix}:${destinationId}:wanted`;
  }

  private pumpKey(destinationId: string): string {
    return `${this.prefix}:${destinationId}:pump`;
  }
}
