import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ClaimRequest, DedupClaims } from '../src/ingest/dedup-claims';
import { api } from './support/api-client';
import { eventually } from './support/eventually';
import { HttpsDestination } from './support/https-destination';
import { send } from './support/raw-http';
import { ThrowawayRedis } from './support/redis-server';
import { type ServiceUnderTest, startServiceProcess } from './support/service-process';
import { addDestination, createEndpoint, type EndpointFixture } from './support/webhook-fixtures';

/**
 * The service's CAPTURE_TIMEOUT_MS here: a claim is stale this long and a second after it was made, and a
 * capture may be sent again until half of it has passed (the default's 2 s would leave a stale claim's
 * take-over half a second on a loaded machine).
 */
const CAPTURE_TIMEOUT_MS = 4000;
/** How long the claims asked of Redis directly may take. */
const TIMEOUT_MS = 1000;

describe('dedup claims in Redis', () => {
  describe(DedupClaims.name, () => {
    const prefix = `hooktrail_test_claims_${randomUUID()}`;
    let redis: Redis;
    let claims: DedupClaims;
    beforeAll(async () => {
      redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
      claims = new DedupClaims(redis, prefix);
      await redis.ping(); // claims are asked of a connected client only
    });
    afterAll(async () => {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    });

    /** The claims answered, without Redis's epoch. */
    const claim = async (asks: (ClaimRequest | null)[], timeoutMs: number, now?: number) =>
      (await claims.claim(asks, timeoutMs, now))?.claims;

    const ask = (key: string, eventId: string, overrides: Partial<ClaimRequest> = {}): ClaimRequest => ({
      token: 'tok',
      key,
      eventId,
      windowMs: 60_000,
      heldBy: null,
      takeOver: false,
      ...overrides,
    });

    it('gives a key to its first claim, answers the others with it, and expires it with the window', async () => {
      const [first, again, other] = (await claim(
        [ask('a', 'e1'), ask('a', 'e2'), null, ask('b', 'e3', { windowMs: 200 })],
        TIMEOUT_MS,
        1000,
      ))!;
      expect(first).toEqual({ value: 'e1:1000', eventId: 'e1', claimedAt: 1000, own: true });
      expect(again).toEqual({ value: 'e1:1000', eventId: 'e1', claimedAt: 1000, own: false });
      expect(other).toBeNull();
      expect(await redis.pttl(`${prefix}:dedup:tok:a`)).toBeGreaterThan(59_000);

      const later = await claim([ask('a', 'e4'), ask('b', 'e5')], TIMEOUT_MS, 2000);
      expect(later?.map((held) => held?.eventId)).toEqual(['e1', 'e3']);
      await sleep(300);
      expect((await claim([ask('b', 'e6')], TIMEOUT_MS, 3000))?.[0]).toMatchObject({
        eventId: 'e6',
        own: true,
      });
    });

    it('scopes a key to its endpoint', async () => {
      await claim([ask('scoped', 'e1')], TIMEOUT_MS);
      const elsewhere = await claim([ask('scoped', 'e2', { token: 'other' })], TIMEOUT_MS);
      expect(elsewhere?.[0]?.own).toBe(true);
    });

    it('takes a key over only from the stale claim it names', async () => {
      const [held] = (await claim([ask('stale', 'e1')], TIMEOUT_MS, 1000)) ?? [];
      const wrong = await claim([ask('stale', 'e2', { heldBy: 'e9:1000', takeOver: true })], TIMEOUT_MS);
      expect(wrong?.[0]).toMatchObject({ eventId: 'e1', own: false });
      const notStale = await claim([ask('stale', 'e2', { heldBy: held?.value as string })], TIMEOUT_MS);
      expect(notStale?.[0]).toMatchObject({ eventId: 'e1', own: false });
      const taken = await claim(
        [ask('stale', 'e3', { heldBy: held?.value as string, takeOver: true })],
        TIMEOUT_MS,
        5000,
      );
      expect(taken?.[0]).toEqual({ value: 'e3:5000', eventId: 'e3', claimedAt: 5000, own: true });
      expect(await redis.pttl(`${prefix}:dedup:tok:stale`)).toBeGreaterThan(59_000);
    });

    it('releases a claim only while it still holds its key', async () => {
      const [mine] = (await claim([ask('released', 'e1')], TIMEOUT_MS, 1000)) ?? [];
      const [kept] = (await claim([ask('kept', 'e2')], TIMEOUT_MS, 1000)) ?? [];
      await redis.set(`${prefix}:dedup:tok:kept`, 'e3:2000');
      await claims.release([
        { ask: ask('released', 'e1'), claim: mine! },
        { ask: ask('kept', 'e2'), claim: kept! },
      ]);
      expect(await redis.get(`${prefix}:dedup:tok:released`)).toBeNull();
      expect(await redis.get(`${prefix}:dedup:tok:kept`)).toBe('e3:2000');
    });
  });

  describe('on the capture path', () => {
    let redisServer: ThrowawayRedis;
    let redis: Redis;
    let sut: ServiceUnderTest;
    beforeAll(async () => {
      redisServer = await ThrowawayRedis.start();
      redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
      redis.on('error', () => undefined);
      sut = await startServiceProcess({
        REDIS_URL: redisServer.url,
        APP_ROLE: 'api',
        CAPTURE_TIMEOUT_MS: String(CAPTURE_TIMEOUT_MS),
      });
    });
    afterAll(async () => {
      await sut?.close();
      redis?.disconnect();
      await redisServer?.stop();
    });

    async function dedupedEndpoint(): Promise<EndpointFixture> {
      const fixture = await createEndpoint(sut.url);
      const patched = await api(sut.url, 'PATCH', `/api/endpoints/${fixture.endpointId}`, {
        token: fixture.user.accessToken,
        body: { dedup: { key: 'header:x-delivery-id' } },
      });
      expect(patched.status).toBe(200);
      return fixture;
    }

    const post = (fixture: EndpointFixture, delivery: string) =>
      send(sut.url, 'POST', new URL(fixture.captureUrl).pathname, {
        body: '{}',
        headers: { 'content-type': 'application/json', 'x-delivery-id': delivery },
      });

    const claimKey = (fixture: EndpointFixture, delivery: string) =>
      `${sut.env.REDIS_PREFIX}:dedup:${new URL(fixture.captureUrl).pathname.slice('/in/'.length)}:${delivery}`;

    async function storedIds(fixture: EndpointFixture): Promise<string[]> {
      const listed = await api(sut.url, 'GET', `/api/endpoints/${fixture.endpointId}/events`, {
        token: fixture.user.accessToken,
      });
      return (listed.body.events as { id: string }[]).map((event) => event.id).sort();
    }

    it('answers 503 and stores nothing while a claim names an event not committed yet', async () => {
      const fixture = await dedupedEndpoint();
      // Another process's claim, its batch still in flight.
      await redis.set(claimKey(fixture, 'in-flight'), `${randomUUID()}:${Date.now()}`);

      const answer = await post(fixture, 'in-flight');

      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBeDefined();
      expect(await storedIds(fixture)).toEqual([]);
    });

    it('takes over a claim whose event was never stored once it is stale, and stores the capture', async () => {
      const fixture = await dedupedEndpoint();
      // A claim left by a process that died before its batch committed, stale in half a second.
      const claimedAt = Date.now() - CAPTURE_TIMEOUT_MS - 500;
      await redis.set(claimKey(fixture, 'orphan'), `${randomUUID()}:${claimedAt}`);

      const started = Date.now();
      const answer = await post(fixture, 'orphan');

      expect(answer.status).toBe(200);
      expect(answer.json.duplicate).toBeUndefined();
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      expect(await storedIds(fixture)).toEqual([answer.json.id]);
      expect(await redis.get(claimKey(fixture, 'orphan'))).toMatch(new RegExp(`^${answer.json.id}:`));
      const repeat = await post(fixture, 'orphan');
      expect(repeat.json).toEqual({ id: answer.json.id, duplicate: true });
    });

    it('releases the claim of a capture it did not store', async () => {
      const fixture = await dedupedEndpoint();
      expect((await post(fixture, 'warm-up')).status).toBe(200);
      const setActive = (is_active: boolean) =>
        api(sut.url, 'PATCH', `/api/endpoints/${fixture.endpointId}`, {
          token: fixture.user.accessToken,
          body: { is_active },
        });
      await setActive(false);

      expect((await post(fixture, 'refused')).status).toBe(403);
      await eventually(
        () => redis.exists(claimKey(fixture, 'refused')),
        (exists) => exists === 0,
        2000,
      );
      await setActive(true);
      const accepted = await post(fixture, 'refused');

      expect(accepted.status).toBe(200);
      expect(accepted.json.duplicate).toBeUndefined();
    });

    it('keeps a repeat waiting for the claim it found when Redis goes away meanwhile, and never stores it', async () => {
      const fixture = await dedupedEndpoint();
      await redis.set(claimKey(fixture, 'held-then-down'), `${randomUUID()}:${Date.now()}`);

      const answering = post(fixture, 'held-then-down');
      await sleep(300);
      await redisServer.stop();
      let answer: Awaited<ReturnType<typeof post>>;
      try {
        answer = await answering;
      } finally {
        await redisServer.startServer();
      }

      expect(answer.status).toBe(503);
      expect(await storedIds(fixture)).toEqual([]);
      await eventually(
        () => api(sut.url, 'GET', '/health/ready'),
        (ready) => ready.status === 200,
      );
    });

    it("takes every capture while Redis is down, answering a repeat by PostgreSQL's record, and once it is back", async () => {
      const fixture = await dedupedEndpoint();
      await redisServer.stop();
      let down: Awaited<ReturnType<typeof post>>[];
      try {
        down = [await post(fixture, 'outage'), await post(fixture, 'outage')];
      } finally {
        await redisServer.startServer();
      }

      expect(down.map((answer) => answer.status)).toEqual([200, 200]);
      expect(down[0].json.duplicate).toBeUndefined();
      // The first was committed before the repeat came: the events' keys answer it without Redis.
      expect(down[1].json).toEqual({ id: down[0].json.id, duplicate: true });
      const health = () => api(sut.url, 'GET', '/health/ready');
      await eventually(health, (answer) => answer.status === 200);
      const repeat = await post(fixture, 'outage');
      expect(repeat.json).toEqual({ id: down[0].json.id, duplicate: true });
      expect(await storedIds(fixture)).toEqual([down[0].json.id]);
    });
  });

  describe('across a Redis restart', () => {
    /** The short window: long enough for a restart on a loaded machine, short enough to wait out. */
    const SHORT_WINDOW_S = 20;
    let redisServer: ThrowawayRedis;
    let sink: HttpsDestination;
    let sut: ServiceUnderTest;
    beforeAll(async () => {
      redisServer = await ThrowawayRedis.start();
      sink = await HttpsDestination.start();
      sut = await startServiceProcess({ REDIS_URL: redisServer.url, APP_ROLE: 'all' });
    });
    afterAll(async () => {
      await sut?.close();
      await sink?.close();
      await redisServer?.stop();
    });

    async function forwardedEndpoint(windowSeconds: number): Promise<EndpointFixture> {
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut.url, fixture, `${sink.url}/hook`);
      const patched = await api(sut.url, 'PATCH', `/api/endpoints/${fixture.endpointId}`, {
        token: fixture.user.accessToken,
        body: { dedup: { key: 'header:x-delivery-id', window_seconds: windowSeconds } },
      });
      expect(patched.status).toBe(200);
      return fixture;
    }

    const post = (fixture: EndpointFixture, delivery: string, body: string) =>
      send(sut.url, 'POST', new URL(fixture.captureUrl).pathname, {
        body,
        headers: { 'content-type': 'application/json', 'x-delivery-id': delivery },
      });

    const forwardedBodies = () => sink.received.map((request) => request.body.toString()).sort();

    it('answers a provider event sent again after Redis lost its claims as a duplicate, and forwards it once', async () => {
      const day = await forwardedEndpoint(86_400);
      const short = await forwardedEndpoint(SHORT_WINDOW_S);
      const first = await post(day, 'evt_1', '{"n":"day-1"}');
      const firstShort = await post(short, 'evt_1', '{"n":"short-1"}');
      const firstAt = Date.now();
      expect([first.status, firstShort.status]).toEqual([200, 200]);
      await sink.waitForRequests(2);

      // Redis keeps nothing on disk: it comes back without a claim.
      await redisServer.stop();
      await redisServer.startServer();
      await eventually(
        () => api(sut.url, 'GET', '/health/ready'),
        (ready) => ready.status === 200,
      );

      const again = await post(day, 'evt_1', '{"n":"day-2"}');
      const againShort = await post(short, 'evt_1', '{"n":"short-2"}');
      expect(again.json).toEqual({ id: first.json.id, duplicate: true });
      expect(againShort.json).toEqual({ id: firstShort.json.id, duplicate: true });
      // Put back in Redis, for the rest of its window: the next repeat is answered from there.
      const redis = new Redis(redisServer.url);
      try {
        const token = new URL(day.captureUrl).pathname.slice('/in/'.length);
        const key = `${sut.env.REDIS_PREFIX}:dedup:${token}:evt_1`;
        expect(await redis.get(key)).toMatch(new RegExp(`^${first.json.id}:`));
        expect(await redis.pttl(key)).toBeGreaterThan(86_000_000);
      } finally {
        redis.disconnect();
      }
      expect((await post(day, 'evt_1', '{"n":"day-3"}')).json).toEqual({
        id: first.json.id,
        duplicate: true,
      });

      // Once the short window has passed, the same provider event is a new one, forwarded; within the day's
      // window it is still a repeat.
      const left = firstAt + SHORT_WINDOW_S * 1000 + 500 - Date.now();
      expect(left).toBeGreaterThan(0); // the repeats above were sent within the short window
      await sleep(left);
      const afterWindow = await post(short, 'evt_1', '{"n":"short-4"}');
      expect(afterWindow.status).toBe(200);
      expect(afterWindow.json.duplicate).toBeUndefined();
      expect((await post(day, 'evt_1', '{"n":"day-4"}')).json).toEqual({
        id: first.json.id,
        duplicate: true,
      });
      // A capture after the others, so that a repeat forwarded by mistake would have arrived before it.
      await post(day, 'evt_2', '{"n":"day-last"}');
      await sink.waitForRequests(4);
      const stored = async (fixture: EndpointFixture) =>
        (
          await api(sut.url, 'GET', `/api/endpoints/${fixture.endpointId}/events`, {
            token: fixture.user.accessToken,
          })
        ).body.events.length;
      expect([await stored(day), await stored(short)]).toEqual([2, 2]);
      expect(forwardedBodies()).toEqual(
        ['{"n":"day-1"}', '{"n":"day-last"}', '{"n":"short-1"}', '{"n":"short-4"}'].sort(),
      );
    });
  });
});
