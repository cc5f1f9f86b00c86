import type Redis from 'ioredis';
import { withRedisTimeout } from '../common/redis-timeout';

/** A capture's ask for its dedup key. */
export interface ClaimRequest {
  /** The endpoint's capture token (permanent: it scopes the key to the endpoint). */
  token: string;
  key: string;
  eventId: string;
  /** How long the claim holds. */
  windowMs: number;
  /** The claim this capture last found holding its key (its event not committed then), if it did. */
  heldBy: string | null;
  /** `heldBy` is stale (its event will never be stored): this capture takes it over if it still holds the key. */
  takeOver: boolean;
}

/** The claim that holds a key: the asking capture's own, or an earlier capture's. */
export interface Claim {
  /** As stored in Redis: `<event id>:<epoch ms of the claim>`. */
  value: string;
  eventId: string;
  claimedAt: number;
  own: boolean;
  /**
   * An own claim made in a Redis that has not held every claim for the whole window (it restarted empty,
   * or a replica without its marker took over, since the window began): an earlier claim on the key may
   * have been lost, and PostgreSQL's record of the stored events decides (CaptureWriter).
   */
  unsure?: true;
}

/**
 * Each key is set to its capture's claim (`<event id>:<now>`) unless another claim holds it (SET NX GET,
 * the window as its expiry), or taken over when it still holds the stale claim the capture names. KEYS[1]
 * is the marker of the time since which this Redis holds every claim (set by its first claim: a Redis that
 * lost its data lost the marker with it), the keys to claim follow. ARGV[1] is the asks as JSON,
 * `[event id, window ms, stale claim or ""]` for each key in order (one argument, not three a key:
 * ioredis's cost is by argument), ARGV[2] the time. Answers the marker, then the claim holding each key
 * that another holds, "" for those the capture now holds, joined by spaces. A key asked twice in one call
 * is claimed by the first ask.
 */
const CLAIM = `
local asks, now = cjson.decode(ARGV[1]), ARGV[2]
local held = {redis.call('SET', KEYS[1], now, 'NX', 'GET') or now}
for i = 2, #KEYS do
  local key = KEYS[i]
  local event, window, stale = asks[i - 1][1], asks[i - 1][2], asks[i - 1][3]
  local mine = event .. ':' .. now
  local current = redis.call('SET', key, mine, 'NX', 'GET', 'PX', window)
  if current and current == stale then
    redis.call('SET', key, mine, 'PX', window)
    current = false
  end
  held[i] = current or ''
end
return table.concat(held, ' ')`;

/**
 * Each key still holding the own claim `ARGV[1][i][1]` is set to the earlier claim `ARGV[1][i][2]` that
 * PostgreSQL recalled, expiring after `ARGV[1][i][3]` ms.
 */
const ADOPT = `
local adoptions = cjson.decode(ARGV[1])
for i, key in ipairs(KEYS) do
  local own, earlier, ttl = adoptions[i][1], adoptions[i][2], adoptions[i][3]
  if redis.call('GET', key) == own then redis.call('SET', key, earlier, 'PX', ttl) end
end
return 0`;

/** Each key whose claim is still the given one is deleted. */
const RELEASE = `
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i] then redis.call('DEL', key) end
end
return 0`;

/** How long a release waits for Redis (nobody waits on it: a claim not released goes stale). */
const RELEASE_TIMEOUT_MS = 1000;

type ClaimingRedis = Redis & {
  dedupClaim(keys: number, ...args: (string | number)[]): Promise<string>;
  dedupRelease(keys: number, ...args: string[]): Promise<number>;
  dedupAdopt(keys: number, ...args: string[]): Promise<number>;
};

/**
 * The claim answered for `asked`: another's (`<event id>:<epoch ms>`), or, when "", its own made at `now`,
 * unsure when the Redis that gave it has held every claim only since `since` (epoch ms), within the window.
 */
export function claimOf(held: string, asked: ClaimRequest, now: number, since = -Infinity): Claim {
  if (held === '') {
    const own: Claim = {
      value: `${asked.eventId}:${now}`,
      eventId: asked.eventId,
      claimedAt: now,
      own: true,
    };
    if (since > now - asked.windowMs) own.unsure = true;
    return own;
  }
  const colon = held.indexOf(':');
  const eventId = held.slice(0, colon);
  return { value: held, eventId, claimedAt: Number(held.slice(colon + 1)), own: eventId === asked.eventId };
}

/**
 * Dedup keys claimed in Redis, shared by every process (`${prefix}:dedup:<token>:<key>`, expiring with the
 * window): a batch of captures claims its keys in one call before it is stored, so that the capture
 * statement writes nothing for dedup but the rare repeat. A claim names its event before that event is
 * committed; the capture statement confirms the event of a repeat's claim before answering it as a
 * duplicate (DedupClaims' callers release the claims of captures that were not stored).
 */
export class DedupClaims {
  private readonly redis: ClaimingRedis;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('dedupClaim', { lua: CLAIM });
    redis.defineCommand('dedupRelease', { lua: RELEASE });
    redis.defineCommand('dedupAdopt', { lua: ADOPT });
    this.redis = redis as ClaimingRedis;
  }

  /**
   * The claim holding each asked key (null where nothing was asked), in one round trip; null when Redis is
   * not connected or has not answered within `timeoutMs`.
   */
  async claim(
    asks: (ClaimRequest | null)[],
    timeoutMs: number,
    now = Date.now(),
  ): Promise<(Claim | null)[] | null> {
    if (this.redis.status !== 'ready' || timeoutMs <= 0) return null;
    const asked = asks.filter((ask): ask is ClaimRequest => ask !== null);
    const keys = [`${this.prefix}:dedup:since`, ...asked.map((ask) => this.keyOf(ask))];
    const json = JSON.stringify(
      asked.map((ask) => [ask.eventId, ask.windowMs, ask.takeOver ? (ask.heldBy ?? '') : '']),
    );
    let held: string[];
    try {
      held = (
        await withRedisTimeout(this.redis.dedupClaim(keys.length, ...keys, json, now), timeoutMs)
      ).split(' ');
    } catch {
      return null;
    }
    const since = Number(held[0]);
    let next = 1;
    return asks.map((ask) => (ask === null ? null : claimOf(held[next++], ask, now, since)));
  }

  /** Deletes the given own claims that still hold their keys; never rejects (a claim left behind goes stale). */
  async release(claims: { ask: ClaimRequest; claim: Claim }[]): Promise<void> {
    if (this.redis.status !== 'ready') return;
    await withRedisTimeout(
      this.redis.dedupRelease(
        claims.length,
        ...claims.map(({ ask }) => this.keyOf(ask)),
        ...claims.map(({ claim }) => claim.value),
      ),
      RELEASE_TIMEOUT_MS,
    ).catch(() => undefined);
  }

  /**
   * Replaces each own claim, where it still holds its key, with the earlier claim PostgreSQL recalled (its
   * event's, made when that event was received), for what is left of the window; never rejects (a key
   * left with the own claim is recalled again by its next repeat, once that claim is stale).
   */
  async adopt(
    adoptions: { ask: ClaimRequest; own: Claim; earlier: Claim }[],
    now = Date.now(),
  ): Promise<void> {
    if (this.redis.status !== 'ready' || adoptions.length === 0) return;
    const json = JSON.stringify(
      adoptions.map(({ ask, own, earlier }) => [
        own.value,
        earlier.value,
        Math.max(1, earlier.claimedAt + ask.windowMs - now),
      ]),
    );
    await withRedisTimeout(
      this.redis.dedupAdopt(adoptions.length, ...adoptions.map(({ ask }) => this.keyOf(ask)), json),
      RELEASE_TIMEOUT_MS,
    ).catch(() => undefined);
  }

  private keyOf(ask: ClaimRequest): string {
    return `${this.prefix}:dedup:${ask.token}:${ask.key}`;
  }
}
