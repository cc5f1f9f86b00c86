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
}

/**
 * Each key is set to its capture's claim (`<event id>:<now>`) unless another claim holds it (SET NX GET,
 * the window as its expiry), or taken over when it still holds the stale claim the capture names. ARGV[1]
 * is the asks as JSON, `[event id, window ms, stale claim or ""]` for each key in order (one argument, not
 * three a key: ioredis's cost is by argument), ARGV[2] the time. Answers the claim holding each key that
 * another holds, "" for those the capture now holds, joined by spaces. A key asked twice in one call is
 * claimed by the first ask.
 */
const CLAIM = `
local asks, now = cjson.decode(ARGV[1]), ARGV[2]
local held = {}
for i, key in ipairs(KEYS) do
  local event, window, stale = asks[i][1], asks[i][2], asks[i][3]
  local mine = event .. ':' .. now
  local current = redis.call('SET', key, mine, 'NX', 'GET', 'PX', window)
  if current and current == stale then
    redis.call('SET', key, mine, 'PX', window)
    current = false
  end
  held[i] = current or ''
end
return table.concat(held, ' ')`;

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
};

/** The claim answered for `asked`: another's (`<event id>:<epoch ms>`), or, when "", its own made at `now`. */
export function claimOf(held: string, asked: ClaimRequest, now: number): Claim {
  if (held === '')
    return { value: `${asked.eventId}:${now}`, eventId: asked.eventId, claimedAt: now, own: true };
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
    const keys = asked.map((ask) => this.keyOf(ask));
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
    let next = 0;
    return asks.map((ask) => (ask === null ? null : claimOf(held[next++], ask, now)));
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

  private keyOf(ask: ClaimRequest): string {
    return `${this.prefix}:dedup:${ask.token}:${ask.key}`;
  }
}
