import type Redis from 'ioredis';
import { withRedisTimeout } from '../common/redis-timeout';

/**
 * A dedup claim whose event is not stored this long after it was made never will be: its batch has
 * committed or failed by then (each waits CAPTURE_TIMEOUT_MS / 2 at most for a connection and as long for
 * its statement), so a repeat takes the key over. One second more for clocks of processes on other hosts.
 */
export function staleClaimAfterMs(captureTimeoutMs: number): number {
  return captureTimeoutMs + 1000;
}

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
 * three a key: ioredis's cost is by argument), ARGV[2] the time. A key asked twice in one call is claimed by
 * the first ask.
 * The last key is the claims' epoch, `<run id of the Redis server>:<epoch ms>`: since when this server has
 * held every claim made. A server that restarted has lost it with the claims, and a replica promoted in a
 * failover (which may have lagged behind the claims) finds it under another server's run id: either way
 * the epoch starts again now. Answers the epoch, then the claim holding each key that another holds, "" for
 * those the capture now holds, joined by spaces.
 */
const CLAIM = `
local asks, now, epochKey = cjson.decode(ARGV[1]), ARGV[2], KEYS[#KEYS]
local server = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
local epoch = redis.call('GET', epochKey)
if not epoch or string.sub(epoch, 1, #server + 1) ~= server .. ':' then
  epoch = server .. ':' .. now
  redis.call('SET', epochKey, epoch)
end
local held = {}
for i = 1, #KEYS - 1 do
  local key, event, window, stale = KEYS[i], asks[i][1], asks[i][2], asks[i][3]
  local mine = event .. ':' .. now
  local current = redis.call('SET', key, mine, 'NX', 'GET', 'PX', window)
  if current and current == stale then
    redis.call('SET', key, mine, 'PX', window)
    current = false
  end
  held[i] = current or ''
end
return epoch .. ' ' .. table.concat(held, ' ')`;

/**
 * Moves the epoch (KEYS[1]) back to ARGV[2] if it is still ARGV[1]: no claim made before that time was
 * lost with the claims (PostgreSQL has no event with a key of a later time before the epoch began).
 */
const SETTLE = `
local epoch = redis.call('GET', KEYS[1])
if epoch == ARGV[1] then
  redis.call('SET', KEYS[1], string.sub(epoch, 1, string.find(epoch, ':')) .. ARGV[2])
end
return 0`;

/**
 * Each key that still holds the capture's own claim is set to the claim found in PostgreSQL for it, until
 * the end of that claim's window. ARGV[1] is `[own claim, found claim, ms left]` for each key, as JSON.
 */
const RESTORE = `
local restores = cjson.decode(ARGV[1])
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == restores[i][1] then
    redis.call('SET', key, restores[i][2], 'PX', restores[i][3])
  end
end
return 0`;

/** Each key whose claim is still the given one is deleted. */
const RELEASE = `
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i] then redis.call('DEL', key) end
end
return 0`;

/** How long a release or a settle waits for Redis (nobody waits on them: a claim not released goes stale). */
const RELEASE_TIMEOUT_MS = 1000;

type ClaimingRedis = Redis & {
  dedupClaim(keys: number, ...args: (string | number)[]): Promise<string>;
  dedupRestore(keys: number, ...args: string[]): Promise<number>;
  dedupSettle(keys: number, ...args: (string | number)[]): Promise<number>;
  dedupRelease(keys: number, ...args: string[]): Promise<number>;
};

/** The claims holding a batch's keys, and since when Redis has held every claim made. */
export interface Claims {
  claims: (Claim | null)[];
  /** The epoch as stored: `<Redis run id>:<epoch ms>`. */
  epoch: string;
  /** The epoch's time (ms): a claim lost with Redis was made before it. */
  since: number;
  /** This call began the epoch (Redis had lost the claims, or never held any). */
  began: boolean;
}

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
    redis.defineCommand('dedupRestore', { lua: RESTORE });
    redis.defineCommand('dedupSettle', { lua: SETTLE });
    redis.defineCommand('dedupRelease', { lua: RELEASE });
    this.redis = redis as ClaimingRedis;
  }

  /**
   * The claim holding each asked key (null where nothing was asked), in one round trip, and since when Redis
   * has held the claims (a claim of ours on a key whose window began before that may be a repeat of an event
   * whose claim Redis lost); null when Redis is not connected or has not answered within `timeoutMs`.
   */
  async claim(asks: (ClaimRequest | null)[], timeoutMs: number, now = Date.now()): Promise<Claims | null> {
    if (this.redis.status !== 'ready' || timeoutMs <= 0) return null;
    const asked = asks.filter((ask): ask is ClaimRequest => ask !== null);
    const keys = [...asked.map((ask) => this.keyOf(ask)), this.epochKey];
    const json = JSON.stringify(
      asked.map((ask) => [ask.eventId, ask.windowMs, ask.takeOver ? (ask.heldBy ?? '') : '']),
    );
    let epoch: string;
    let held: string[];
    try {
      [epoch, ...held] = (
        await withRedisTimeout(this.redis.dedupClaim(keys.length, ...keys, json, now), timeoutMs)
      ).split(' ');
    } catch {
      return null;
    }
    let next = 0;
    const since = Number(epoch.slice(epoch.indexOf(':') + 1));
    return {
      claims: asks.map((ask) => (ask === null ? null : claimOf(held[next++], ask, now))),
      epoch,
      since,
      began: since === now,
    };
  }

  /**
   * Puts back claims Redis lost: each key still holding the own claim given is set to the one found, for what
   * is left of its window. Rejects when Redis fails or is slower than `timeoutMs`.
   */
  async restore(
    restores: { ask: ClaimRequest; own: Claim; found: Claim; leftMs: number }[],
    timeoutMs: number,
  ): Promise<void> {
    await withRedisTimeout(
      this.redis.dedupRestore(
        restores.length,
        ...restores.map(({ ask }) => this.keyOf(ask)),
        JSON.stringify(restores.map(({ own, found, leftMs }) => [own.value, found.value, leftMs])),
      ),
      timeoutMs,
    );
  }

  /** Moves the epoch back to `since` (ms) if it is still `epoch`; never rejects (it stays where it is). */
  async settle(epoch: string, since: number): Promise<void> {
    await withRedisTimeout(this.redis.dedupSettle(1, this.epochKey, epoch, since), RELEASE_TIMEOUT_MS).catch(
      () => undefined,
    );
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

  private get epochKey(): string {
    return `${this.prefix}:dedup-epoch`;
  }

  private keyOf(ask: ClaimRequest): string {
    return `${this.prefix}:dedup:${ask.token}:${ask.key}`;
  }
}
