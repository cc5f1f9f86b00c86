import { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import type { FailureKind } from '../src/outbound/delivery-sender';
import { IssueTracker } from '../src/issues/issue-tracker';
import type { TrackedAttempt } from '../src/issues/tracked-attempts';
import { api, registerUser } from './support/api-client';
import { answer, HttpsDestination } from './support/https-destination';
import { useDeliveryApp } from './support/delivery-app';
import { eventually } from './support/eventually';
import {
  addDestination,
  capture,
  createEndpoint,
  type EndpointFixture,
  hasStatus,
  waitForEvent,
} from './support/webhook-fixtures';

/** Five attempts per delivery, 300 ms apart. */
const RETRY_DELAYS = '300,300,300,300';
const ATTEMPTS = 5;

describe('issues', () => {
  const app = useDeliveryApp({ DELIVERY_RETRY_DELAYS_MS: RETRY_DELAYS, DELIVERY_TIMEOUT_MS: '1000' });

  const listIssues = async (fixture: EndpointFixture, query = '') => {
    const response = await api(app.sut.url, 'GET', `/api/issues${query}`, {
      token: fixture.user.accessToken,
    });
    expect(response.status).toBe(200);
    return response.body.issues as Record<string, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const attemptsMade = async (destinationId: string) => {
    const { rows } = await app.db.query<{ attempts: number }>(
      'select coalesce(sum(attempt_count), 0)::int as attempts from deliveries where destination_id = $1',
      [destinationId],
    );
    return rows[0].attempts;
  };

  it('opens an issue on the first failure, counts the rest into it, opens one per kind, resolves them all once the destination delivers again', async () => {
    const destination = await app.server();
    destination.always(answer(500, 'boom'));
    const fixture = await createEndpoint(app.sut.url);
    const destinationId = await addDestination(app.sut.url, fixture, destination.url);

    // The first failure opens the issue.
    const first = await capture(fixture, '{"n":1}');
    await destination.waitForRequests(1);
    const [opened] = await eventually(
      () => listIssues(fixture),
      (issues) => issues.length === 1,
    );
    expect(opened).toMatchObject({
      endpoint_id: fixture.endpointId,
      destination: { id: destinationId, url: destination.url },
      kind: 'http_5xx',
      summary: 'HTTP 500 Internal Server Error',
      status: 'open',
      last_event_id: first,
      resolved_at: null,
    });
    expect(opened.failure_count).toBeGreaterThanOrEqual(1);
    expect(Date.parse(opened.first_seen_at)).toBeLessThanOrEqual(Date.parse(opened.last_seen_at));

    // Every later failure of that kind is counted into it: one issue, as many failures as attempts.
    await waitForEvent(app.sut.url, fixture, first, hasStatus('dead_letter'));
    const counted = await listIssues(fixture);
    expect(counted).toHaveLength(1);
    expect(counted[0]).toMatchObject({ id: opened.id, status: 'open', failure_count: ATTEMPTS });
    expect(await attemptsMade(destinationId)).toBe(ATTEMPTS);

    // A failure of another kind opens a second issue; the first one is acknowledged meanwhile.
    const acknowledged = await api(app.sut.url, 'PATCH', `/api/issues/${opened.id}`, {
      token: fixture.user.accessToken,
      body: { status: 'acknowledged' },
    });
    expect(acknowledged.status).toBe(200);
    expect(acknowledged.body.issue).toMatchObject({
      id: opened.id,
      status: 'acknowledged',
      resolved_at: null,
    });
    destination.always(answer(404, 'no such hook'));
    const second = await capture(fixture, '{"n":2}');
    await waitForEvent(app.sut.url, fixture, second, hasStatus('dead_letter'));
    const both = await listIssues(fixture);
    expect(both.map((issue) => [issue.kind, issue.status, issue.failure_count])).toEqual([
      ['http_4xx', 'open', ATTEMPTS],
      ['http_5xx', 'acknowledged', ATTEMPTS],
    ]);
    expect(both[0]).toMatchObject({ summary: 'HTTP 404 Not Found', last_event_id: second });

    // The destination delivers again: both resolve by themselves (the acknowledged one too).
    destination.always(answer(200, 'ok'));
    const third = await capture(fixture, '{"n":3}');
    await waitForEvent(app.sut.url, fixture, third, hasStatus('delivered'));
    const resolved = await eventually(
      () => listIssues(fixture, '?status=resolved'),
      (issues) => issues.length === 2,
    );
    for (const issue of resolved) expect(Date.parse(issue.resolved_at)).toBeGreaterThan(0);
    expect(await listIssues(fixture, '?status=open')).toEqual([]);
    expect(await listIssues(fixture, '?status=acknowledged')).toEqual([]);

    // A new failure after that opens a new issue rather than reopening the resolved one.
    destination.always(answer(500, 'boom again'));
    await capture(fixture, '{"n":4}');
    const reopened = await eventually(
      () => listIssues(fixture, '?status=open'),
      (issues) => issues.length === 1,
    );
    expect(reopened[0].kind).toBe('http_5xx');
    expect(reopened[0].id).not.toBe(opened.id);
  }, 60_000);

  it('counts concurrent failures of one kind into a single issue, exactly once each', async () => {
    const destination = await app.server();
    destination.always(answer(503, 'busy'));
    const fixture = await createEndpoint(app.sut.url);
    const destinationId = await addDestination(app.sut.url, fixture, destination.url);
    const EVENTS = 40;
    const ids = await Promise.all(Array.from({ length: EVENTS }, (_, n) => capture(fixture, `{"n":${n}}`)));
    for (const id of ids) await waitForEvent(app.sut.url, fixture, id, hasStatus('dead_letter'));

    const { rows } = await app.db.query<{ kind: string; status: string; failure_count: number }>(
      'select kind, status, failure_count from issues where destination_id = $1',
      [destinationId],
    );
    expect(rows).toEqual([{ kind: 'http_5xx', status: 'open', failure_count: EVENTS * ATTEMPTS }]);
    expect(await attemptsMade(destinationId)).toBe(EVENTS * ATTEMPTS);
  }, 60_000);

  it('counts every failure, those followed by a success in the same batch of records too', async () => {
    const destination = await app.server();
    // Every other request fails: failures and successes of concurrent deliveries are recorded together.
    let failed = 0;
    let answered = 0;
    destination.always((_request, response) => {
      if (answered++ % 2 === 0) return answer(200, 'ok')(_request, response);
      failed++;
      answer(503, 'busy')(_request, response);
    });
    const fixture = await createEndpoint(app.sut.url);
    const destinationId = await addDestination(app.sut.url, fixture, destination.url);
    const ids = await Promise.all(Array.from({ length: 40 }, (_, n) => capture(fixture, `{"n":${n}}`)));
    for (const id of ids)
      await waitForEvent(app.sut.url, fixture, id, (event) =>
        ['delivered', 'dead_letter'].includes(event.status),
      );

    const { rows } = await app.db.query<{ failures: number }>(
      'select coalesce(sum(failure_count), 0)::int as failures from issues where destination_id = $1',
      [destinationId],
    );
    expect(failed).toBeGreaterThan(0);
    expect(rows[0].failures).toBe(failed);
    expect(await attemptsMade(destinationId)).toBe(answered);
  }, 60_000);

  it('asks the AI engine for at most 30 new diagnoses a minute through issues; a cached one is always shown', async () => {
    const destination = await app.server();
    destination.always(answer(500, 'boom'));
    const fixture = await createEndpoint(app.sut.url);
    await addDestination(app.sut.url, fixture, destination.url);
    const eventId = await capture(fixture);
    // Dead-lettered: no attempt is made any more but those written below.
    await waitForEvent(app.sut.url, fixture, eventId, hasStatus('dead_letter'));
    const [issue] = await listIssues(fixture);
    await app.db.query(`update users set plan = 'starter' where id = $1`, [fixture.user.id]);
    const diagnosis = async () => {
      const response = await api(app.sut.url, 'GET', `/api/issues/${issue.id}`, {
        token: fixture.user.accessToken,
      });
      expect(response.status).toBe(200);
      expect(response.body.issue).toMatchObject({ id: issue.id, kind: 'http_5xx' });
      return response.body.issue.diagnosis;
    };
    // A diagnosis is cached per set of attempts: one more attempt makes the next one new.
    const oneMoreAttempt = () =>
      app.db.query(
        `update deliveries set attempts = attempts || jsonb_build_array(jsonb_build_object(
           'at', now(), 'response_code', 500, 'duration_ms', 3, 'error', null, 'response_body', 'boom'))
         where event_id = $1`,
        [eventId],
      );
    // The event's kept diagnoses, by the attempts each read: a new one replaces the one before.
    const diagnosesKept = async () => {
      const { rows } = await app.db.query<{ parameters: string }>(
        `select parameters from ai_results where event_id = $1 and operation = 'diagnose'`,
        [eventId],
      );
      return rows.map((row) => row.parameters);
    };

    const seen = new Set<string>();
    for (let n = 1; n <= 30; n += 1) {
      if (n > 1) await oneMoreAttempt();
      expect(await diagnosis()).toMatchObject({ diagnosis: expect.stringContaining('500') });
      const kept = await diagnosesKept();
      expect(kept).toHaveLength(1);
      seen.add(kept[0]);
    }
    expect(seen.size).toBe(30);
    const last = await diagnosesKept();
    // The limit is reached: the cached diagnosis is still shown, a new one is not asked for.
    expect(await diagnosis()).toMatchObject({ diagnosis: expect.stringContaining('500') });
    await oneMoreAttempt();
    expect(await diagnosis()).toBeNull();
    expect(await diagnosesKept()).toEqual(last);
  }, 60_000);

  it('groups failures without a response by kind: connection refused, timeout', async () => {
    const fixture = await createEndpoint(app.sut.url);
    const closed = await HttpsDestination.start();
    const closedUrl = closed.url;
    await closed.close();
    const silent = await app.server();
    silent.always(() => undefined); // never answers: the 1 s time-out
    await addDestination(app.sut.url, fixture, closedUrl);
    await addDestination(app.sut.url, fixture, silent.url);
    await capture(fixture);
    const issues = await eventually(
      () => listIssues(fixture),
      (found) => found.length === 2,
    );
    const byUrl = Object.fromEntries(issues.map((issue) => [issue.destination.url, issue]));
    expect(byUrl[closedUrl]).toMatchObject({
      kind: 'connection',
      summary: expect.stringMatching(/^ECONNREFUSED/),
    });
    expect(byUrl[silent.url]).toMatchObject({ kind: 'timeout', summary: 'timed out after 1000 ms' });
  }, 60_000);

  it('filters by status and endpoint, shows a diagnosis from the starter plan, and hides issues from other users', async () => {
    const destination = await app.server();
    destination.always(answer(500, 'boom'));
    const fixture = await createEndpoint(app.sut.url);
    const other = await createEndpoint(app.sut.url, fixture.user);
    await addDestination(app.sut.url, fixture, destination.url);
    await capture(fixture);
    const [issue] = await eventually(
      () => listIssues(fixture),
      (issues) => issues.length === 1,
    );
    expect(await listIssues(fixture, `?endpoint_id=${fixture.endpointId}`)).toHaveLength(1);
    expect(await listIssues(fixture, `?endpoint_id=${other.endpointId}`)).toEqual([]);
    expect(await listIssues(fixture, `?status=open&endpoint_id=${fixture.endpointId}`)).toHaveLength(1);
    expect(await listIssues(fixture, '?status=resolved')).toEqual([]);

    // Free plan: no diagnosis; starter: the AI engine's diagnosis of the latest failed delivery.
    const token = fixture.user.accessToken;
    const free = await api(app.sut.url, 'GET', `/api/issues/${issue.id}`, { token });
    expect(free.status).toBe(200);
    expect(free.body.issue).toMatchObject({ id: issue.id, kind: 'http_5xx', diagnosis: null });
    await app.db.query(`update users set plan = 'starter' where id = $1`, [fixture.user.id]);
    const starter = await api(app.sut.url, 'GET', `/api/issues/${issue.id}`, { token });
    expect(starter.status).toBe(200);
    expect(starter.body.issue.diagnosis).toEqual({
      diagnosis: expect.stringContaining('500'),
      provider: 'local',
    });

    // Bad input: 400 naming the field.
    const badFilter = await api(app.sut.url, 'GET', '/api/issues?status=closed', { token });
    expect(badFilter.status).toBe(400);
    expect(JSON.stringify(badFilter.body)).toContain('status must be');
    const badEndpoint = await api(app.sut.url, 'GET', '/api/issues?endpoint_id=nope', { token });
    expect(badEndpoint.status).toBe(400);
    expect(JSON.stringify(badEndpoint.body)).toContain('endpoint_id must be a UUID');
    for (const body of [{ status: 'closed' }, {}, { status: null }]) {
      const bad = await api(app.sut.url, 'PATCH', `/api/issues/${issue.id}`, { token, body });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toContain('status must be');
    }

    // Another user: 404 for reading and changing, and it is not in their list.
    const mallory = await registerUser(app.sut.url);
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { status: 'acknowledged' }],
    ] as const) {
      const response = await api(app.sut.url, method, `/api/issues/${issue.id}`, {
        token: mallory.accessToken,
        body,
      });
      expect(response.status).toBe(404);
    }
    const theirs = await api(app.sut.url, 'GET', `/api/issues?endpoint_id=${fixture.endpointId}`, {
      token: mallory.accessToken,
    });
    expect(theirs.body.issues).toEqual([]);
    expect((await api(app.sut.url, 'GET', '/api/issues/not-a-uuid', { token })).status).toBe(404);
    const unchanged = await api(app.sut.url, 'GET', `/api/issues/${issue.id}`, { token });
    expect(unchanged.body.issue.status).toBe('open');

    // Resolved by hand: it stays resolved (409 on reopening); the next failure opens a new issue.
    const resolved = await api(app.sut.url, 'PATCH', `/api/issues/${issue.id}`, {
      token,
      body: { status: 'resolved' },
    });
    expect(resolved.status).toBe(200);
    expect(resolved.body.issue.status).toBe('resolved');
    expect(Date.parse(resolved.body.issue.resolved_at)).toBeGreaterThan(0);
    const reopen = await api(app.sut.url, 'PATCH', `/api/issues/${issue.id}`, {
      token,
      body: { status: 'open' },
    });
    expect(reopen.status).toBe(409);
  }, 60_000);

  it('counts a failure sent before a recorded success into an issue, but never opens one or counts it toward auto-pause', async () => {
    const fixture = await createEndpoint(app.sut.url);
    const destinationId = await addDestination(app.sut.url, fixture, 'https://example.com/hooks');
    await app.db.query('update destinations set auto_pause_after = 2 where id = $1', [destinationId]);
    const tracker = app.sut.app.get(IssueTracker);
    const knex = app.sut.app.get(EntityManager).getKnex();
    const start = Date.now() - 60_000;
    /** Records one batch of attempts, each sent `second` seconds after the start. */
    const track = (...attempts: { second: number; failure?: FailureKind }[]) =>
      knex.transaction((trx) =>
        tracker.track(
          trx,
          attempts.map(({ second, failure }): TrackedAttempt => ({
            destinationId,
            endpointId: fixture.endpointId,
            eventId: randomUUID(),
            at: new Date(start + second * 1000),
            succeeded: failure === undefined,
            failure: failure === undefined ? null : { kind: failure, summary: failure },
          })),
        ),
      );
    const issues = async () =>
      (
        await app.db.query(
          `select kind, status, failure_count from issues where destination_id = $1 order by first_seen_at`,
          [destinationId],
        )
      ).rows;
    const consecutiveFailures = async () =>
      (await app.db.query('select consecutive_failures from destinations where id = $1', [destinationId]))
        .rows[0].consecutive_failures;

    expect((await track({ second: 10, failure: 'http_5xx' })).opened).toHaveLength(1);
    expect((await track({ second: 20 })).resolved).toHaveLength(1);
    // Sent before the success at 20 s: into the issue that success resolved, and a new resolved one.
    const stale = await track({ second: 15, failure: 'http_5xx' }, { second: 16, failure: 'timeout' });
    expect(stale).toMatchObject({ opened: [], resolved: [], paused: [] });
    expect(await issues()).toEqual([
      { kind: 'http_5xx', status: 'resolved', failure_count: 2 },
      { kind: 'timeout', status: 'resolved', failure_count: 1 },
    ]);
    expect(await consecutiveFailures()).toBe(0);

    // A failure sent after it opens an issue; a stale one of its kind is counted into that open issue.
    expect((await track({ second: 30, failure: 'timeout' })).opened).toHaveLength(1);
    expect(await track({ second: 18, failure: 'timeout' })).toMatchObject({ opened: [], paused: [] });
    expect(await consecutiveFailures()).toBe(1);
    // The second failure sent after the success pauses the destination (auto_pause_after 2).
    expect((await track({ second: 31, failure: 'connection' })).paused).toHaveLength(1);
    expect(await issues()).toEqual([
      { kind: 'http_5xx', status: 'resolved', failure_count: 2 },
      { kind: 'timeout', status: 'resolved', failure_count: 1 },
      { kind: 'timeout', status: 'open', failure_count: 2 },
      { kind: 'connection', status: 'open', failure_count: 1 },
    ]);
    expect(await consecutiveFailures()).toBe(2);
  });
});
