import { setTimeout as sleep } from 'node:timers/promises';
import { api } from './support/api-client';
import { answer, HttpsDestination } from './support/https-destination';
import { useDeliveryApp } from './support/delivery-app';
import { eventually } from './support/eventually';
import { capture, createEndpoint, type EndpointFixture } from './support/webhook-fixtures';

/** Five attempts per delivery, 300 ms apart: without the pause, each event would be dead-lettered in ~1.5 s. */
const RETRY_DELAYS = '300,300,300,300';
const AUTO_PAUSE_AFTER = 3;

describe('auto-pause', () => {
  const app = useDeliveryApp({ DELIVERY_RETRY_DELAYS_MS: RETRY_DELAYS, DELIVERY_TIMEOUT_MS: '1000' });

  const destinationsPath = (fixture: EndpointFixture) => `/api/endpoints/${fixture.endpointId}/destinations`;
  const deliveriesOf = async (destinationId: string) => {
    const { rows } = await app.db.query<{ status: string; attempt_count: number }>(
      'select status, attempt_count from deliveries where destination_id = $1 order by created_at, id',
      [destinationId],
    );
    return rows;
  };

  it('pauses a destination after auto_pause_after consecutive failed attempts, holds its deliveries, notifies, and sends the backlog on resume', async () => {
    const destination = await app.server();
    destination.always(answer(500, 'down'));
    const fixture = await createEndpoint(app.sut.url);
    const token = fixture.user.accessToken;
    // The user's webhook notification channels, one per event type (each one's first message goes at once).
    const receivers: Record<string, HttpsDestination> = {};
    for (const type of ['issue.opened', 'destination.paused']) {
      receivers[type] = await app.server();
      const channel = await api(app.sut.url, 'POST', '/api/notification-channels', {
        token,
        body: { type: 'webhook', target: receivers[type].url, events: [type] },
      });
      expect(channel.status).toBe(201);
    }
    const created = await api(app.sut.url, 'POST', destinationsPath(fixture), {
      token,
      body: { url: destination.url, auto_pause_after: AUTO_PAUSE_AFTER },
    });
    expect(created.status).toBe(201);
    expect(created.body.destination).toMatchObject({
      auto_pause_after: AUTO_PAUSE_AFTER,
      paused: false,
      paused_reason: null,
    });
    const path = `${destinationsPath(fixture)}/${created.body.destination.id}`;
    const destinationId: string = created.body.destination.id;

    // One event fails its first three attempts (300 ms apart): the third pauses the destination.
    await capture(fixture, '{"n":0}');
    const paused = await eventually(
      () => api(app.sut.url, 'GET', path, { token }),
      (response) => response.body.destination.paused === true,
    );
    expect(paused.body.destination.paused_reason).toBe(
      `auto-paused after ${AUTO_PAUSE_AFTER} consecutive failed attempts`,
    );
    expect(destination.received).toHaveLength(AUTO_PAUSE_AFTER);

    // Held, not dead-lettered: later events wait too, and nothing is sent while it is paused. There is no
    // condition to await for "nothing happens": watch for longer than the rest of the retry schedule.
    for (let n = 1; n <= 4; n++) await capture(fixture, `{"n":${n}}`);
    await sleep(2000);
    expect(destination.received).toHaveLength(AUTO_PAUSE_AFTER);
    const held = await deliveriesOf(destinationId);
    expect(held).toEqual([
      { status: 'failed', attempt_count: AUTO_PAUSE_AFTER },
      ...Array.from({ length: 4 }, () => ({ status: 'pending', attempt_count: 0 })),
    ]);
    expect((await api(app.sut.url, 'GET', path, { token })).body.destination.backlog.pending).toBe(5);

    // The user's channels heard of the issue and of the pause, once each.
    const [opened] = await receivers['issue.opened'].waitForRequests(1);
    expect(JSON.parse(opened.body.toString())).toMatchObject({
      type: 'issue.opened',
      data: { issue: { kind: 'http_5xx', destination: { id: destinationId }, status: 'open' } },
    });
    const [pausedMessage] = await receivers['destination.paused'].waitForRequests(1);
    expect(JSON.parse(pausedMessage.body.toString())).toMatchObject({
      type: 'destination.paused',
      data: {
        endpoint_id: fixture.endpointId,
        destination: {
          id: destinationId,
          paused: true,
          paused_reason: `auto-paused after ${AUTO_PAUSE_AFTER} consecutive failed attempts`,
        },
      },
    });
    expect(receivers['issue.opened'].received).toHaveLength(1);
    expect(receivers['destination.paused'].received).toHaveLength(1);

    // Resumed once fixed: the backlog goes, the reason and the count are cleared.
    destination.always(answer(200, 'ok'));
    const resumed = await api(app.sut.url, 'PATCH', path, { token, body: { paused: false } });
    expect(resumed.status).toBe(200);
    expect(resumed.body.destination).toMatchObject({ paused: false, paused_reason: null });
    const delivered = await eventually(
      () => deliveriesOf(destinationId),
      (rows) => rows.every((row) => row.status === 'delivered'),
    );
    expect(delivered.map((row) => row.attempt_count)).toEqual([AUTO_PAUSE_AFTER + 1, 1, 1, 1, 1]);
    const bodies = destination.received
      .slice(AUTO_PAUSE_AFTER)
      .map((request) => JSON.parse(request.body.toString()).n)
      .sort();
    expect(bodies).toEqual([0, 1, 2, 3, 4]);
    const { rows } = await app.db.query<{ consecutive_failures: number }>(
      'select consecutive_failures from destinations where id = $1',
      [destinationId],
    );
    expect(rows[0].consecutive_failures).toBe(0);
  }, 60_000);

  it('counts consecutive failures only: a success in between starts the count again', async () => {
    const destination = await app.server();
    // fail, fail, succeed, fail, fail: never three failures in a row.
    destination
      .respondWith(answer(500), answer(500), answer(200), answer(500), answer(500))
      .always(answer(200));
    const fixture = await createEndpoint(app.sut.url);
    const token = fixture.user.accessToken;
    const created = await api(app.sut.url, 'POST', destinationsPath(fixture), {
      token,
      body: { url: destination.url, auto_pause_after: 3, ordering: 'fifo' },
    });
    const path = `${destinationsPath(fixture)}/${created.body.destination.id}`;
    await capture(fixture, '{"n":0}'); // fail, fail, delivered
    await capture(fixture, '{"n":1}'); // fail, fail, delivered
    await destination.waitForRequests(6);
    await eventually(
      () => deliveriesOf(created.body.destination.id),
      (rows) => rows.length === 2 && rows.every((row) => row.status === 'delivered'),
    );
    const read = await api(app.sut.url, 'GET', path, { token });
    expect(read.body.destination).toMatchObject({ paused: false, paused_reason: null });
  }, 60_000);

  it('neither pauses nor opens an issue for a request that timed out after a later one was delivered', async () => {
    const destination = await app.server();
    // The first request hangs until its time-out (1 s); the second, sent meanwhile, is delivered, and so is
    // the first one's retry; the next request fails.
    destination.respondWith(() => undefined, answer(200), answer(200), answer(503)).always(answer(503));
    const fixture = await createEndpoint(app.sut.url);
    const token = fixture.user.accessToken;
    const created = await api(app.sut.url, 'POST', destinationsPath(fixture), {
      token,
      body: { url: destination.url, auto_pause_after: 1 },
    });
    const destinationId: string = created.body.destination.id;
    const path = `${destinationsPath(fixture)}/${destinationId}`;
    const issues = async () =>
      (
        await app.db.query(
          'select kind, status, failure_count from issues where destination_id = $1 order by first_seen_at',
          [destinationId],
        )
      ).rows;

    await capture(fixture, '{"n":0}');
    await destination.waitForRequests(1);
    await capture(fixture, '{"n":1}');
    // The time-out is recorded after the second request's success: stale, it neither pauses the
    // destination (which would hold the retry) nor opens an issue.
    const delivered = await eventually(
      () => deliveriesOf(destinationId),
      (rows) => rows.length === 2 && rows.every((row) => row.status === 'delivered'),
    );
    expect(delivered.map((row) => row.attempt_count)).toEqual([2, 1]);
    expect((await api(app.sut.url, 'GET', path, { token })).body.destination).toMatchObject({
      paused: false,
      paused_reason: null,
    });
    expect(await issues()).toEqual([{ kind: 'timeout', status: 'resolved', failure_count: 1 }]);

    // A failure sent after the success counts: it opens an issue and pauses the destination.
    await capture(fixture, '{"n":2}');
    const paused = await eventually(
      () => api(app.sut.url, 'GET', path, { token }),
      (response) => response.body.destination.paused === true,
    );
    expect(paused.body.destination.paused_reason).toBe('auto-paused after 1 consecutive failed attempts');
    expect(await issues()).toEqual([
      { kind: 'timeout', status: 'resolved', failure_count: 1 },
      { kind: 'http_5xx', status: 'open', failure_count: 1 },
    ]);
  }, 60_000);

  it('a destination paused by hand has no paused_reason', async () => {
    const fixture = await createEndpoint(app.sut.url);
    const token = fixture.user.accessToken;
    const created = await api(app.sut.url, 'POST', destinationsPath(fixture), {
      token,
      body: { url: 'https://hooks.example.com/in', auto_pause_after: 10_000 },
    });
    expect(created.status).toBe(201);
    const path = `${destinationsPath(fixture)}/${created.body.destination.id}`;
    const paused = await api(app.sut.url, 'PATCH', path, { token, body: { paused: true } });
    expect(paused.body.destination).toMatchObject({
      paused: true,
      paused_reason: null,
      auto_pause_after: 10_000,
    });
    const off = await api(app.sut.url, 'PATCH', path, { token, body: { auto_pause_after: null } });
    expect(off.status).toBe(200);
    expect(off.body.destination.auto_pause_after).toBeNull();
  });

  it.each([0, 10_001, 'x', 2.5, true])('refuses auto_pause_after %p with 400 naming it', async (value) => {
    const fixture = await createEndpoint(app.sut.url);
    const token = fixture.user.accessToken;
    const created = await api(app.sut.url, 'POST', destinationsPath(fixture), {
      token,
      body: { url: 'https://hooks.example.com/in', auto_pause_after: value },
    });
    expect(created.status).toBe(400);
    expect(JSON.stringify(created.body)).toContain(
      'auto_pause_after must be an integer from 1 to 10000, or null',
    );
    const ok = await api(app.sut.url, 'POST', destinationsPath(fixture), {
      token,
      body: { url: 'https://hooks.example.com/in' },
    });
    expect(ok.body.destination.auto_pause_after).toBeNull();
    const patched = await api(
      app.sut.url,
      'PATCH',
      `${destinationsPath(fixture)}/${ok.body.destination.id}`,
      {
        token,
        body: { auto_pause_after: value },
      },
    );
    expect(patched.status).toBe(400);
    expect(JSON.stringify(patched.body)).toContain('auto_pause_after must be');
  });
});
