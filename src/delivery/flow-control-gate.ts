import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type Redis from 'ioredis';
import type { Environment } from '../config/environment';
import type { FlowControl } from '../model/destination.entity';
import { REDIS } from '../redis/redis.module';

/** What the gate answers an attempt: go, wait this long for its reserved rate slot, or no place free. */
export type GateAnswer = { granted: true } | { granted: false; waitMs: number | null };

const PERIOD_US = { second: 1_000_000, minute: 60_000_000 } as const;
/** A reserved rate slot is kept this long past its time for the deferred job to come back and use it. */
const RESERVATION_GRACE_MS = 10 * 60_000;
/** A permit outlives the attempt's time-out by this much; one a killed worker held then lapses. */
const PERMIT_GRACE_MS = 10_000;

/**
 * One Redis call decides an attempt, on the server's clock (the same for every worker):
 * - `max_in_flight`: a sorted set of permits (member: the delivery id, score: when the permit lapses);
 *   lapsed ones are dropped first, so a worker killed mid-attempt does not hold its place for ever.
 * - `rate_limit`: attempts are spaced evenly, one per period / limit (a generic cell rate algorithm
 *   without burst): the key holds the next free slot. A delivery that must wait reserves its slot and
 *   comes back for it, so a backlog is paced by one deferral per delivery, not by polling. The schedule's
 *   keys are those of one interval: a changed limit starts a schedule of its own at once, instead of
 *   queueing behind the slots the old one reserved (HeldDeliveries.repace brings those deliveries back).
 * Answers 0 (granted), the ms to the reserved slot, or -1 (every place in flight is taken).
 */
const ACQUIRE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local maxInFlight = tonumber(ARGV[2])
local interval = tonumber(ARGV[3])
if maxInFlight > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if redis.call('ZCARD', KEYS[1]) >= maxInFlight then return -1 end
end
if interval > 0 then
  local reserved = tonumber(redis.call('GET', KEYS[3]))
  if reserved then
    if reserved > now then return math.ceil((reserved - now) / 1000) end
    redis.call('DEL', KEYS[3])
  else
    local slot = math.max(tonumber(redis.call('GET', KEYS[2]) or '0'), now)
    redis.call('SET', KEYS[2], string.format('%d', slot + interval), 'PX', math.ceil((slot + interval - now) / 1000) + 1000)
    if slot > now then
      local waitMs = math.ceil((slot - now) / 1000)
      redis.call('SET', KEYS[3], string.format('%d', slot), 'PX', waitMs + tonumber(ARGV[5]))
      return waitMs
    end
  end
end
if maxInFlight > 0 then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]) * 1000, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
end
return 0
`;

type GatedRedis = Redis & {
  flowControlAcquire(...args: (string | number)[]): Promise<number>;
};

/** A destination's rate limit and `max_in_flight`, held across every worker process in Redis. */
@Injectable()
export class FlowControlGate {
  private readonly redis: GatedRedis;
  private readonly prefix: string;
  private readonly permitTtlMs: number;

  constructor(@Inject(REDIS) redis: Redis, config: ConfigService<Environment, true>) {
    redis.defineCommand('flowControlAcquire', { numberOfKeys: 3, lua: ACQUIRE });
    this.redis = redis as GatedRedis;
    this.prefix = `${config.get('REDIS_PREFIX', { infer: true })}:flow`;
    this.permitTtlMs = config.get('DELIVERY_TIMEOUT_MS', { infer: true }) + PERMIT_GRACE_MS;
  }

  /** Whether the destination has a limit this gate keeps (the default, no limit, costs no Redis call). */
  static applies(limits: FlowControl): boolean {
    return limits.rateLimit !== null || FlowControlGate.maxInFlightOf(limits) !== null;
  }

  /** The attempts the destination may have at once: one for FIFO, else its `max_in_flight` (null: no cap). */
  static maxInFlightOf(limits: FlowControl): number | null {
    return limits.ordering === 'fifo' ? 1 : limits.maxInFlight;
  }

  /** Takes a place for an attempt of `deliveryId`: granted, or refused with the wait to its rate slot. */
  async acquire(destinationId: string, deliveryId: string, limits: FlowControl): Promise<GateAnswer> {
    const intervalUs = FlowControlGate.intervalOf(limits);
    const answer = await this.redis.flowControlAcquire(
      this.inFlightKey(destinationId),
      `${this.prefix}:${destinationId}:next_slot:${intervalUs}`,
      this.reservationKey(destinationId, deliveryId, intervalUs),
      deliveryId,
      FlowControlGate.maxInFlightOf(limits) ?? 0,
      intervalUs,
      this.permitTtlMs,
      RESERVATION_GRACE_MS,
    );
    if (answer === 0) return { granted: true };
    return { granted: false, waitMs: answer > 0 ? answer : null };
  }

  /** Gives back the place of a granted attempt (a lost release lapses with the permit). */
  async release(destinationId: string, deliveryId: string, limits: FlowControl): Promise<void> {
    if (FlowControlGate.maxInFlightOf(limits) !== null)
      await this.redis.zrem(this.inFlightKey(destinationId), deliveryId);
  }

  /**
   * Drops the rate slot a delivery reserved, if any: its job was let go unsent (the destination is paused),
   * and the slot may pass before it comes back. On resume it takes a slot of the schedule then, instead of
   * being granted at once with every other delivery whose slot passed meanwhile.
   */
  async forgetReservation(destinationId: string, deliveryId: string, limits: FlowControl): Promise<void> {
    if (limits.rateLimit !== null)
      await this.redis.del(
        this.reservationKey(destinationId, deliveryId, FlowControlGate.intervalOf(limits)),
      );
  }

  /** Microseconds between two attempts under the rate limit; 0 without one. */
  private static intervalOf(limits: FlowControl): number {
    return limits.rateLimit ? Math.ceil(PERIOD_US[limits.rateLimitPeriod] / limits.rateLimit) : 0;
  }

  private reservationKey(destinationId: string, deliveryId: string, intervalUs: number): string {
    return `${this.prefix}:${destinationId}:reserved:${intervalUs}:${deliveryId}`;
  }

  private inFlightKey(destinationId: string): string {
    return `${this.prefix}:${destinationId}:in_flight`;
  }
}
