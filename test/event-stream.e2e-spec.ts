import Redis from 'ioredis';
import { changesChannel, streamKey } from '../src/realtime/event-change.publisher';
import { api } from './support/api-client';
import { HttpsDestination } from './support/https-destination';
import { spawnService, stopService, type ServiceProcess } from './support/service-process';
import { SseClient } from './support/sse-client';
import { startTestApp, type TestApp } from './support/test-app';
import { addDestination, capture, createEndpoint, type EndpointFixture } from './support/webhook-fixtures';

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
    expect(JSON.parse(created.data)).toMatchObject({
      id: eventId,
      endpoint_id: fixture.endpointId,
      status: 'received',
      method: 'POST',
    });
    const updated = await client.waitFor(
      (message) =>
        message.event === 'event.updated' &&
        JSON.parse(message.data).id === eventId &&
        JSON.parse(message.data).status === 'delivered',
    );
    expect(updated.id).toMatch(/^\d+-\d+$/);
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

  it('sends a listened endpoint its changes in stream order when two processes announce them in the other order', async () => {
    const client = await open(sut.url);
    const redis = new Redis(sut.env.REDIS_URL);
    try {
      const stream = streamKey(sut.env.REDIS_PREFIX, fixture.endpointId);
      const change = (id: string) =>
        JSON.stringify({
          type: 'event.created',
          endpointId: fixture.endpointId,
          event: { id, endpoint_id: fixture.endpointId, status: 'received' },
        });
      const channel = changesChannel(sut.env.REDIS_PREFIX);
      const zero = await redis.xadd(stream, '*', 'change', change('order-0'));
      await redis.publish(channel, JSON.stringify([[fixture.endpointId, zero, zero]]));
      await client.waitFor((message) => JSON.parse(message.data).id === 'order-0');
      // Process A adds 1, process B adds 2, A adds 3; B announces its range before A announces 1..3.
      const [one, two, three] = [
        await redis.xadd(stream, '*', 'change', change('order-1')),
        await redis.xadd(stream, '*', 'change', change('order-2')),
        await redis.xadd(stream, '*', 'change', change('order-3')),
      ];
      await redis.publish(channel, JSON.stringify([[fixture.endpointId, two, two]]));
      await redis.publish(channel, JSON.stringify([[fixture.endpointId, one, three]]));
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
      const stream = streamKey(sut.env.REDIS_PREFIX, quiet.endpointId);
      const change = (id: string) =>
        JSON.stringify({
          type: 'event.created',
          endpointId: quiet.endpointId,
          event: { id, endpoint_id: quiet.endpointId, status: 'received' },
        });
      const channel = changesChannel(sut.env.REDIS_PREFIX);
      // Process A adds 1, process B adds 2 and announces it; A announces 1 only then.
      const one = await redis.xadd(stream, '*', 'change', change('first-1'));
      const two = await redis.xadd(stream, '*', 'change', change('first-2'));
      await redis.publish(channel, JSON.stringify([[quiet.endpointId, two, two]]));
      await redis.publish(channel, JSON.stringify([[quiet.endpointId, one, one]]));
      await client.waitFor((message) => JSON.parse(message.data).id === 'first-2');
      const third = await redis.xadd(stream, '*', 'change', change('first-3'));
      await redis.publish(channel, JSON.stringify([[quiet.endpointId, third, third]]));
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

  it('sends a heartbeat comment every 15 s', async () => {
    const client = await open(sut.url);
    await new Promise((resolve) => setTimeout(resolve, 15_500));
    expect(client.comments).toContain('heartbeat');
  }, 30_000);

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
});
