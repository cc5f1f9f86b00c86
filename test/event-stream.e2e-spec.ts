import Redis from 'ioredis';
import type { ConfigService } from '@nestjs/config';
import {
  CHANGES_FIELD,
  changesChannel,
  type EventChange,
  EventChangePublisher,
  STREAM_HISTORY_MS,
  streamKey,
  watchedKey,
} from '../src/realtime/event-change.publisher';
import { HEARTBEAT_MS } from '../src/realtime/event-stream.gateway';
import { EventStreamService, READ_PAGE_ENTRIES, WATCH_RENEW_MS } from '../src/realtime/event-stream.service';
import { api } from './support/api-client';
import { eventually } from './support/eventually';
import { HttpsDestination } from './support/https-destination';
import { ThrowawayRedis } from './support/redis-server';
import { spawnService, stopService, type ServiceProcess } from './support/service-process';
import { SseClient } from './support/sse-client';
import { startTestApp, type TestApp } from './support/test-app';
import { addDestination, capture, createEndpoint, type EndpointFixture } from './support/webhook-fixtures';

/**
 * Stands for another process: adds an endpoint's changes to its stream (one entry holding the events
 * created with these ids), and announces ranges of entries.
 */
function otherProcess(redis: Redis, prefix: string, endpointId: string) {
  const stream = streamKey(prefix, endpointId);
  const channel = changesChannel(prefix);
  const created = (id: string): EventChange => ({
    type: 'event.created',
    endpointId,
    event: { id, endpoint_id: endpointId, status: 'received' },
  });
  return {
    add: (...ids: string[]) =>
      redis.xadd(stream, '*', CHANGES_FIELD, JSON.stringify(ids.map(created))) as Promise<string>,
    /** An entry as the version before entries held many changes wrote it: one change, field `change`. */
    addOne: (id: string) => redis.xadd(stream, '*', 'change', JSON.stringify(created(id))) as Promise<string>,
    announce: (firstId: string, lastId: string) =>
      redis.publish(channel, JSON.stringify([[endpointId, firstId, lastId]])),
  };
}

describe('event stream (SSE)', () => {
  let sut: TestApp;
  let second: ServiceProcess;
  let sink: HttpsDestination;
  let fixture: EndpointFixture;
  const clients: SseClient[] = [];
  const open = async (baseUrl: string, lastEventId?: string) => {
    const client = await SseClient.open(
      `${baseUrl}/api/endpoints/${fixture.endpointId}/events/stream`,
      fixture.user.accessToken,
      lastEventId,
    );
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    sut = await startTestApp();
    sink = await HttpsDestination.start();
    fixture = await createEndpoint(sut.url);
    // A second API process (no workers) on the same database and Redis: what one process captures
    // or delivers must reach dashboards connected to the other.
    second = await spawnService({
      APP_ROLE: 'api',
      DATABASE_URL: sut.env.DATABASE_URL,
      REDIS_URL: sut.env.REDIS_URL,
      REDIS_PREFIX: sut.env.REDIS_PREFIX,
      LOG_LEVEL: 'warn',
    });
  });
  afterAll(async () => {
    clients.forEach((client) => client.close());
    await stopService(second);
    await sut.close();
    await sink.close();
  });

  it('streams an event captured by one process, and its delivery status change, to a client of another', async () => {
    await addDestination(sut.url, fixture, sink.url);
    const client = await open(`http://127.0.0.1:${second.port}`);
    expect(client.status).toBe(200);

    const eventId = await capture(fixture, '{"live":true}');

    const created = await client.waitFor(
      (message) => message.event === 'event.created' && JSON.parse(message.data).id === eventId,
      2000,
    );
    expect(JSON.parse(created.data)).toEqual({
      id: eventId,
      endpoint_id: fixture.endpointId,
      status: 'received',
      verification: { status: 'none', reason: null },
      method: 'POST',
      source_ip: '127.0.0.1',
      received_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      body: '{"live":true}',
    });
    const updated = await client.waitFor(
      (message) =>
        message.event === 'event.updated' &&
        JSON.parse(message.data).id === eventId &&
        JSON.parse(message.data).status === 'delivered',
    );
    expect(updated.id).toMatch(/^\d+-\d+-\d+$/);
  });

  it('resumes after a reconnect with Last-Event-ID, without gaps or repeats', async () => {
    const first = await open(sut.url);
    const before = await capture(fixture, '{"n":"before"}');
    const seen = await first.waitFor(
      (message) => message.event === 'event.created' && JSON.parse(message.data).id === before,
    );
    first.close();

    const missed = [await capture(fixture, '{"n":1}'), await capture(fixture, '{"n":2}')];
    const resumed = await open(`http://127.0.0.1:${second.port}`, seen.id);
    for (const eventId of missed) {
      await resumed.waitFor(
        (message) => message.event === 'event.created' && JSON.parse(message.data).id === eventId,
      );
    }
    const createdIds = resumed.messages
      .filter((message) => message.event === 'event.created')
      .map((message) => JSON.parse(message.data).id);
    expect(createdIds).not.toContain(before);
    expect(new Set(resumed.messages.map((message) => message.id)).size).toBe(resumed.messages.length);
  });

  it('tells a first connection where the stream stands, so a dashboard that saw no change yet resumes from there', async () => {
    const quiet = await createEndpoint(sut.url);
    const url = (baseUrl: string) => `${baseUrl}/api/endpoints/${quiet.endpointId}/events/stream`;
    const before = await capture(quiet, '{"n":"before"}');
    const first = await SseClient.open(url(sut.url), quiet.user.accessToken);
    clients.push(first);
    const position = await eventually(
      async () => first.lastEventId,
      (id) => id !== '',
    );
    expect(first.messages).toEqual([]);
    first.close();

    const missed = [await capture(quiet, '{"n":1}'), await capture(quiet, '{"n":2}')];
    const resumed = await SseClient.open(
      url(`http://127.0.0.1:${second.port}`),
      quiet.user.accessToken,
      position,
    );
    clients.push(resumed);
    for (const eventId of missed)
      await resumed.waitFor(
        (message) => message.event === 'event.created' && JSON.parse(message.data).id === eventId,
      );
    expect(resumed.messages.map((message) => JSON.parse(message.data).id)).not.toContain(before);
  });

  it('resumes inside an entry of many changes, and after an entry id or an entry of an earlier version', async () => {
    const endpoint = await createEndpoint(sut.url);
    const redis = new Redis(sut.env.REDIS_URL);
    const resume = async (lastEventId: string, lastCreated: string) => {
      const client = await SseClient.open(
        `${sut.url}/api/endpoints/${endpoint.endpointId}/events/stream`,
        endpoint.user.accessToken,
        lastEventId,
      );
      clients.push(client);
      await client.waitFor((message) => JSON.parse(message.data).id === lastCreated);
      return client.messages.map((message) => [message.id, JSON.parse(message.data).id]);
    };
    try {
      const other = otherProcess(redis, sut.env.REDIS_PREFIX, endpoint.endpointId);
      const batch = await other.add('m-0', 'm-1', 'm-2');
      const older = await other.addOne('m-3');
      await other.add('m-4');
      expect(await resume(`${batch}-0`, 'm-4')).toEqual([
        [`${batch}-1`, 'm-1'],
        [`${batch}-2`, 'm-2'],
        [`${older}-0`, 'm-3'],
        [expect.stringMatching(/^\d+-\d+-0$/), 'm-4'],
      ]);
      // An entry id, as dashboards were sent when an entry held one change, stands for the whole entry.
      expect((await resume(batch, 'm-4')).map(([, id]) => id)).toEqual(['m-3', 'm-4']);
    } finally {
      redis.disconnect();
    }
  });

  it('resumes after more entries than one read of the stream takes', async () => {
    const endpoint = await createEndpoint(sut.url);
    const redis = new Redis(sut.env.REDIS_URL);
    try {
      const other = otherProcess(redis, sut.env.REDIS_PREFIX, endpoint.endpointId);
      const first = await other.add('p-0');
      const count = READ_PAGE_ENTRIES * 2 + 1;
      for (let n = 1; n <= count; n++) await other.add(`p-${n}`);
      const client = await SseClient.open(
        `${sut.url}/api/endpoints/${endpoint.endpointId}/events/stream`,
        endpoint.user.accessToken,
        first,
      );
      clients.push(client);
      await client.waitFor((message) => JSON.parse(message.data).id === `p-${count}`);
      expect(client.messages.map((message) => JSON.parse(message.data).id)).toEqual(
        Array.from({ length: count }, (_, index) => `p-${index + 1}`),
      );
    } finally {
      redis.disconnect();
    }
  });

  it('sends a listened endpoint its changes in stream order when two processes announce them in the other order', async () => {
    const client = await open(sut.url);
    const redis = new Redis(sut.env.REDIS_URL);
    try {
      const other = otherProcess(redis, sut.env.REDIS_PREFIX, fixture.endpointId);
      const zero = await other.add('order-0');
      await other.announce(zero, zero);
      await client.waitFor((message) => JSON.parse(message.data).id === 'order-0');
      // Process A adds 1, process B adds 2, A adds 3; B announces its range before A announces 1..3.
      const [one, two, three] = [
        await other.add('order-1'),
        await other.add('order-2'),
        await other.add('order-3'),
      ];
      await other.announce(two, two);
      await other.announce(one, three);
      await client.waitFor((message) => JSON.parse(message.data).id === 'order-3');
      const order = client.messages
        .map((message) => JSON.parse(message.data).id)
        .filter((id: string) => id.startsWith('order-'));
      expect(order).toEqual(['order-0', 'order-1', 'order-2', 'order-3']);
    } finally {
      redis.disconnect();
    }
  });

  it('sends a new dashboard a change made after it connected, though announced after a later one', async () => {
    // A new endpoint: no dashboard of it is open in this process yet, so this is its first read.
    const quiet = await createEndpoint(sut.url);
    const client = await SseClient.open(
      `${sut.url}/api/endpoints/${quiet.endpointId}/events/stream`,
      quiet.user.accessToken,
    );
    clients.push(client);
    const redis = new Redis(sut.env.REDIS_URL);
    try {
      const other = otherProcess(redis, sut.env.REDIS_PREFIX, quiet.endpointId);
      // Process A adds 1, process B adds 2 and announces it; A announces 1 only then.
      const one = await other.add('first-1');
      const two = await other.add('first-2');
      await other.announce(two, two);
      await other.announce(one, one);
      await client.waitFor((message) => JSON.parse(message.data).id === 'first-2');
      const third = await other.add('first-3');
      await other.announce(third, third);
      await client.waitFor((message) => JSON.parse(message.data).id === 'first-3');
      expect(client.messages.map((message) => JSON.parse(message.data).id)).toEqual([
        'first-1',
        'first-2',
        'first-3',
      ]);
    } finally {
      redis.disconnect();
    }
  });

  it('keeps no changes of an endpoint nobody watches, and watches one for 10 minutes after its last dashboard', async () => {
    const quiet = await createEndpoint(sut.url);
    const redis = new Redis(sut.env.REDIS_URL);
    try {
      const unwatched = await capture(quiet, '{"n":"unwatched"}');
      const client = await SseClient.open(
        `http://127.0.0.1:${second.port}/api/endpoints/${quiet.endpointId}/events/stream`,
        quiet.user.accessToken,
      );
      clients.push(client);
      const watchedAt = Date.now();
      const watched = await capture(quiet, '{"n":"watched"}');
      await client.waitFor((message) => JSON.parse(message.data).id === watched);
      // One flush at a time: the unwatched capture's flush ended before the watched one's began.
      const kept = (await redis.xrange(streamKey(sut.env.REDIS_PREFIX, quiet.endpointId), '-', '+')).flatMap(
        ([, fields]) => JSON.parse(fields[1]).map((change: EventChange) => change.event.id),
      );
      expect(kept).toEqual([watched]);
      expect(kept).not.toContain(unwatched);

      // Read before closing: the other process may see the close before this one reads the clock again.
      const closedAt = Date.now();
      client.close();
      const until = await eventually(
        async () => Number(await redis.zscore(watchedKey(sut.env.REDIS_PREFIX), quiet.endpointId)),
        (score) => score >= closedAt + STREAM_HISTORY_MS,
      );
      expect(until).toBeGreaterThan(watchedAt + STREAM_HISTORY_MS);
      expect(until).toBeLessThanOrEqual(Date.now() + STREAM_HISTORY_MS);
    } finally {
      redis.disconnect();
    }
  });

  it('renews the watch on its endpoints every minute, and drops the watches that lapsed', async () => {
    const prefix = `${sut.env.REDIS_PREFIX}:renewal`;
    const redis = new Redis(sut.env.REDIS_URL);
    const intervals = jest.spyOn(global, 'setInterval');
    const service = new EventStreamService(redis, {
      get: () => prefix,
    } as unknown as ConfigService<never, true>);
    try {
      service.onModuleInit();
      const [renew] = intervals.mock.calls.find(([, ms]) => ms === WATCH_RENEW_MS) ?? [];
      expect(renew).toBeInstanceOf(Function);
      const stop = await service.listen('endpoint-a', () => undefined);
      // As a minute later: a's watch nearer its end, b's lapsed, c watched by another process.
      const now = Date.now();
      await redis.zadd(
        watchedKey(prefix),
        now + STREAM_HISTORY_MS - WATCH_RENEW_MS,
        'endpoint-a',
        now - 1,
        'endpoint-b',
        now + 1000,
        'endpoint-c',
      );
      (renew as () => void)();
      const [a, b, c] = await eventually(
        () => redis.zmscore(watchedKey(prefix), 'endpoint-a', 'endpoint-b', 'endpoint-c'),
        ([, lapsed]) => lapsed === null,
      );
      expect(Number(a)).toBeGreaterThanOrEqual(now + STREAM_HISTORY_MS);
      expect(b).toBeNull();
      expect(Number(c)).toBe(now + 1000);
      stop();
    } finally {
      intervals.mockRestore();
      await service.onApplicationShutdown();
      redis.disconnect();
    }
  });

  it('watches its endpoints again as soon as Redis is back, one opened while Redis was away included', async () => {
    const throwaway = await ThrowawayRedis.start();
    const prefix = `${sut.env.REDIS_PREFIX}:rewatch`;
    // As the process's shared client: a command fails after one reconnection attempt.
    const redis = new Redis(throwaway.url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    const service = new EventStreamService(redis, {
      get: () => prefix,
    } as unknown as ConfigService<never, true>);
    let check: Redis | undefined;
    try {
      service.onModuleInit();
      const stopA = await service.listen('endpoint-a', () => undefined);
      expect(await redis.zscore(watchedKey(prefix), 'endpoint-a')).not.toBeNull();
      await throwaway.stop();
      // Its watch fails: Redis is away.
      const stopB = await service.listen('endpoint-b', () => undefined);
      // Back, and empty: a's watch is gone too.
      const restartedAt = Date.now();
      await throwaway.startServer();
      check = new Redis(throwaway.url);
      const [a, b] = await eventually(
        () => check!.zmscore(watchedKey(prefix), 'endpoint-a', 'endpoint-b'),
        (scores) => scores.every((score) => score !== null),
        10_000,
      );
      // Well before the minute's renewal.
      expect(Date.now() - restartedAt).toBeLessThan(WATCH_RENEW_MS / 2);
      expect(Number(a)).toBeGreaterThanOrEqual(restartedAt + STREAM_HISTORY_MS);
      expect(Number(b)).toBeGreaterThanOrEqual(restartedAt + STREAM_HISTORY_MS);
      stopA();
      stopB();
    } finally {
      check?.disconnect();
      await service.onApplicationShutdown();
      redis.disconnect();
      await throwaway.stop();
    }
  });

  it('sends a heartbeat comment every 15 s', async () => {
    const client = await open(sut.url);
    const openedAt = Date.now();
    await eventually(
      async () => client.comments,
      (comments) => comments.includes('heartbeat'),
      HEARTBEAT_MS + 5000,
    );
    expect(Date.now() - openedAt).toBeGreaterThanOrEqual(HEARTBEAT_MS - 100);
  }, 40_000);

  it("answers 404 for another user's endpoint and 401 without a token", async () => {
    const stranger = await createEndpoint(sut.url);
    const notMine = await SseClient.open(
      `${sut.url}/api/endpoints/${fixture.endpointId}/events/stream`,
      stranger.user.accessToken,
    );
    expect(notMine.status).toBe(404);
    const anonymous = await api(sut.url, 'GET', `/api/endpoints/${fixture.endpointId}/events/stream`);
    expect(anonymous.status).toBe(401);
  });

  it('appends a flush of changes as one entry per watched endpoint, in order, and announces each endpoint once', async () => {
    const prefix = `${sut.env.REDIS_PREFIX}:publisher`;
    const redis = new Redis(sut.env.REDIS_URL);
    const subscriber = new Redis(sut.env.REDIS_URL);
    try {
      await subscriber.subscribe(changesChannel(prefix));
      const announced = new Promise<string>((resolve) =>
        subscriber.once('message', (_, message) => resolve(message)),
      );
      const publisher = new EventChangePublisher(redis, {
        get: () => prefix,
      } as unknown as ConfigService<never, true>);
      // Watched: a and b; c never was, d's watch has lapsed.
      const now = Date.now();
      await redis.zadd(
        watchedKey(prefix),
        now + 60_000,
        'endpoint-a',
        now + 60_000,
        'endpoint-b',
        now - 1,
        'endpoint-d',
      );
      const change = (endpointId: string, id: string): EventChange => ({
        type: 'event.created',
        endpointId,
        event: { id, endpoint_id: endpointId, status: 'received' },
      });
      publisher.publish([
        change('endpoint-a', 'a1'),
        change('endpoint-c', 'c1'),
        change('endpoint-b', 'b1'),
        change('endpoint-d', 'd1'),
        change('endpoint-a', 'a2'),
      ]);

      const ranges = JSON.parse(await announced);
      const entries = async (endpointId: string) =>
        (await redis.xrange(streamKey(prefix, endpointId), '-', '+')).map(([id, fields]) => ({
          id,
          field: fields[0],
          events: JSON.parse(fields[1]).map((change: EventChange) => change.event.id),
        }));
      const [streamA, streamB] = [await entries('endpoint-a'), await entries('endpoint-b')];
      expect(streamA).toEqual([{ id: expect.any(String), field: CHANGES_FIELD, events: ['a1', 'a2'] }]);
      expect(streamB).toEqual([{ id: expect.any(String), field: CHANGES_FIELD, events: ['b1'] }]);
      expect(ranges).toEqual([
        ['endpoint-a', streamA[0].id, streamA[0].id],
        ['endpoint-b', streamB[0].id, streamB[0].id],
      ]);
      expect(await redis.exists(streamKey(prefix, 'endpoint-c'), streamKey(prefix, 'endpoint-d'))).toBe(0);
    } finally {
      redis.disconnect();
      subscriber.disconnect();
    }
  });

  it('writes one flush at a time: what is published meanwhile goes together in the next', async () => {
    const prefix = `${sut.env.REDIS_PREFIX}:publisher-merge`;
    const redis = new Redis(sut.env.REDIS_URL);
    try {
      await redis.ping();
      // The first flush's write is held until the test lets it go.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const pipeline = redis.pipeline.bind(redis);
      redis.pipeline = () => {
        const writing = pipeline();
        const exec = writing.exec.bind(writing);
        writing.exec = () => held.then(() => exec());
        return writing;
      };
      const publisher = new EventChangePublisher(redis, {
        get: () => prefix,
      } as unknown as ConfigService<never, true>);
      await redis.zadd(watchedKey(prefix), Date.now() + 60_000, 'endpoint-a');
      const change = (id: string): EventChange => ({
        type: 'event.created',
        endpointId: 'endpoint-a',
        event: { id, endpoint_id: 'endpoint-a', status: 'received' },
      });
      const turn = () => new Promise((resolve) => setImmediate(resolve));

      publisher.publish([change('a1')]);
      await turn();
      publisher.publish([change('a2')]);
      await turn();
      publisher.publish([change('a3')]);
      await turn();
      release();

      const entries = async () =>
        (await redis.xrange(streamKey(prefix, 'endpoint-a'), '-', '+')).map(([, fields]) =>
          JSON.parse(fields[1]).map((published: EventChange) => published.event.id),
        );
      expect(await eventually(entries, (ids) => ids.flat().length === 3)).toEqual([['a1'], ['a2', 'a3']]);
    } finally {
      redis.disconnect();
    }
  });
});
