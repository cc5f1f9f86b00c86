import { createHash, randomBytes } from 'node:crypto';
import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { Client } from 'pg';
import { AUDITED_ROUTES, NOT_AUDITED, routeKey } from '../src/audit/audit-actions';
import { REDACTED } from '../src/audit/audit-changes';
import { BULK_REPLAY_QUEUE } from '../src/jobs/bulk-replay-jobs';
import { api, createApiKey, registerUser, type RegisteredUser } from './support/api-client';
import { eventually } from './support/eventually';
import { HttpsDestination } from './support/https-destination';
import { loadOpenApi, type OpenApiDocument, operationsOf } from './support/openapi-document';
import { startTestApp, type TestApp } from './support/test-app';

interface Entry {
  id: string;
  at: string;
  actor: { type: 'user' | 'api_key'; id: string; email: string };
  action: string;
  target: { type: string; id: string | null };
  ip: string | null;
  changes: Record<string, unknown>;
}

/** The caller as every request of this file reaches the service: no proxy, so its socket's address. */
const LOCAL_IP = '127.0.0.1';

/** `/api/endpoints/{id}` (OpenAPI) → `/api/endpoints/:id` (the Fastify route template the audit table uses). */
const templateOf = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

const secretValue = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

/** [action, target type, target id]: what an entry says happened. */
const summary = (entry: Entry) => [entry.action, entry.target.type, entry.target.id];

/**
 * The audit log over HTTP, with real PostgreSQL and Redis: the table of audited routes checked against the
 * live OpenAPI document, one entry per successful write with its actor, target and ip, no secret value
 * anywhere in the table, and who may read which log. APP_ROLE=api: replays and bulk replays are only
 * enqueued, so nothing changes in the background.
 */
describe('audit log', () => {
  let sut: TestApp;
  let db: Client;
  let receiver: HttpsDestination;
  let owner: RegisteredUser;
  /** Every secret value sent in this file: none may reach the audit_log table (the last test). */
  const secretsSent: string[] = [];

  const call = (user: RegisteredUser | string, method: string, path: string, body?: unknown) =>
    api(sut.url, method, path, { token: typeof user === 'string' ? user : user.accessToken, body });

  /** The answer's body, once its status is `status` (a failure shows the body, which says why). */
  const expectStatus = async (pending: ReturnType<typeof call>, status: number) => {
    const response = await pending;
    expect({ status: response.status, body: response.body }).toEqual({ status, body: expect.anything() });
    return response.body;
  };

  const auditLog = (user: RegisteredUser, query = '') => call(user, 'GET', `/api/audit-log${query}`);

  const entriesOf = async (user: RegisteredUser, query = ''): Promise<Entry[]> => {
    const separator = query ? '&' : '?';
    return (await expectStatus(auditLog(user, `${query}${separator}limit=100`), 200)).entries as Entry[];
  };

  const lastEntryId = async () =>
    Number((await db.query(`select coalesce(max(id), 0)::text as id from audit_log`)).rows[0].id);

  /** The entries of `user`'s log (filtered by `query`) written while `writes` ran, oldest first. */
  const recordedDuring = async (
    user: RegisteredUser,
    writes: () => Promise<unknown>,
    query = '',
  ): Promise<Entry[]> => {
    const before = await lastEntryId();
    await writes();
    return (await entriesOf(user, query)).filter((entry) => Number(entry.id) > before).reverse();
  };

  const createEndpoint = async (user: RegisteredUser | string, body: Record<string, unknown> = {}) =>
    (await expectStatus(call(user, 'POST', '/api/endpoints', { name: 'Payments', ...body }), 201))
      .endpoint as { id: string; public_token: string };

  const createTeam = async (creator: RegisteredUser) => {
    await db.query(`update users set plan = 'team' where id = $1`, [creator.id]);
    return (await expectStatus(call(creator, 'POST', '/api/teams', { name: 'Platform' }), 201)).team
      .id as string;
  };

  /** Members are added in the database: the invitation flow is test/teams.e2e-spec.ts's. */
  const addMember = (teamId: string, user: RegisteredUser, role: string) =>
    db.query(`insert into team_members (team_id, user_id, role) values ($1, $2, $3)`, [
      teamId,
      user.id,
      role,
    ]);

  beforeAll(async () => {
    sut = await startTestApp({ APP_ROLE: 'api' });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    receiver = await HttpsDestination.start();
    owner = await registerUser(sut.url);
  });
  afterAll(async () => {
    await db?.end();
    await sut?.close();
    await receiver?.close();
  });

  describe('the table of audited routes (generated from the OpenAPI document)', () => {
    let document: OpenApiDocument;
    beforeAll(async () => {
      document = await loadOpenApi(sut.url);
    });

    it('lists every write route of the API as audited or as deliberately not, and only routes that exist', () => {
      const writes = operationsOf(document).filter((operation) => operation.method !== 'GET');
      expect(writes.length).toBeGreaterThanOrEqual(20);
      const keys = writes.map((operation) => routeKey(operation.method, templateOf(operation.path)));
      expect(keys.filter((key) => !(key in AUDITED_ROUTES) && !(key in NOT_AUDITED))).toEqual([]);
      expect(
        [...Object.keys(AUDITED_ROUTES), ...Object.keys(NOT_AUDITED)].filter((key) => !keys.includes(key)),
      ).toEqual([]);
    });

    it('audits only routes that need a caller, and places each route on a resource by its grant (@Can)', () => {
      const problems: string[] = [];
      for (const operation of operationsOf(document)) {
        const key = routeKey(operation.method, templateOf(operation.path));
        if (!(key in AUDITED_ROUTES)) continue;
        if (!operation.isProtected) problems.push(`${key}: needs no token, so it has no actor`);
        const access = (
          document.paths[operation.path][operation.method.toLowerCase()] as Record<string, unknown>
        )['x-access'];
        if (operation.path.includes('{') && access === undefined)
          problems.push(`${key}: names a resource but has no @Can, so its entry has no team or endpoint`);
      }
      expect(problems).toEqual([]);
    });
  });

  it("records each write on one's own endpoint once, with its action, actor, target, ip and body", async () => {
    const verificationSecret = secretValue('verification');
    const inboundPassword = secretValue('password');
    const destinationSecret = `whsec_${secretValue('destination')}`;
    const rotatedSecret = `whsec_${secretValue('rotated')}`;
    const urlPassword = secretValue('url');
    secretsSent.push(verificationSecret, inboundPassword, destinationSecret, rotatedSecret, urlPassword);
    const urlWith = (password: string) => `https://hooks:${password}@${new URL(receiver.url).host}/hooks`;
    let endpoint = { id: '', public_token: '' };
    let destinationId = '';
    let eventId = '';
    let bulkReplayId = '';
    let issueId = '';

    const entries = await recordedDuring(owner, async () => {
      endpoint = await createEndpoint(owner, {
        verification: { provider: 'github', secret: verificationSecret, mode: 'flag' },
      });
      const base = `/api/endpoints/${endpoint.id}`;
      const captured = await fetch(`${sut.url}/in/${endpoint.public_token}`, { method: 'POST', body: '{}' });
      eventId = ((await captured.json()) as { id: string }).id;
      await expectStatus(
        call(owner, 'PATCH', base, {
          name: 'Payments (prod)',
          inbound_auth: { type: 'basic', username: 'hooks', password: inboundPassword },
        }),
        200,
      );
      destinationId = (
        await expectStatus(
          call(owner, 'POST', `${base}/destinations`, {
            url: `${receiver.url}/hooks`,
            secret: destinationSecret,
          }),
          201,
        )
      ).destination.id;
      await expectStatus(
        call(owner, 'PATCH', `${base}/destinations/${destinationId}`, {
          url: urlWith(urlPassword),
          secret: rotatedSecret,
          rate_limit: 10,
        }),
        200,
      );
      await expectStatus(call(owner, 'POST', `${base}/events/${eventId}/replay`), 200);
      // a dry run only counts: it is not a write
      await expectStatus(call(owner, 'POST', `${base}/bulk-replays`, { dry_run: true }), 200);
      bulkReplayId = (await expectStatus(call(owner, 'POST', `${base}/bulk-replays`, {}), 202)).bulk_replay
        .id;
      await expectStatus(call(owner, 'POST', `${base}/bulk-replays/${bulkReplayId}/cancel`), 200);
      issueId = (
        await db.query<{ id: string }>(
          `insert into issues (endpoint_id, destination_id, kind, summary, failure_count, first_seen_at, last_seen_at)
           values ($1, $2, 'http_5xx', 'HTTP 500', 1, now(), now()) returning id`,
          [endpoint.id, destinationId],
        )
      ).rows[0].id;
      await expectStatus(call(owner, 'PATCH', `/api/issues/${issueId}`, { status: 'acknowledged' }), 200);
      await expectStatus(call(owner, 'DELETE', `${base}/destinations/${destinationId}`), 200);
      await expectStatus(call(owner, 'DELETE', base), 200);
    });

    expect(entries.map(summary)).toEqual([
      ['endpoint.created', 'endpoint', endpoint.id],
      ['endpoint.updated', 'endpoint', endpoint.id],
      ['destination.created', 'destination', destinationId],
      ['destination.updated', 'destination', destinationId],
      ['event.replayed', 'event', eventId],
      ['bulk_replay.created', 'bulk_replay', bulkReplayId],
      ['bulk_replay.cancelled', 'bulk_replay', bulkReplayId],
      ['issue.updated', 'issue', issueId],
      ['destination.deleted', 'destination', destinationId],
      ['endpoint.deleted', 'endpoint', endpoint.id],
    ]);
    for (const entry of entries) {
      expect(entry.actor).toEqual({ type: 'user', id: owner.id, email: owner.email });
      expect(entry.ip).toBe(LOCAL_IP);
      expect(Date.parse(entry.at)).toBeGreaterThan(Date.now() - 60_000);
    }
    const [created, updated, destinationCreated, destinationUpdated, , , , issueUpdated, destinationDeleted] =
      entries;
    expect(created.changes).toEqual({
      name: 'Payments',
      verification: { provider: 'github', secret: REDACTED, mode: 'flag' },
    });
    expect(updated.changes).toEqual({
      name: 'Payments (prod)',
      inbound_auth: { type: 'basic', username: 'hooks', password: REDACTED },
    });
    expect(destinationCreated.changes).toEqual({ url: `${receiver.url}/hooks`, secret: REDACTED });
    expect(destinationUpdated.changes).toEqual({ url: urlWith(REDACTED), secret: REDACTED, rate_limit: 10 });
    expect(issueUpdated.changes).toEqual({ status: 'acknowledged' });
    expect(destinationDeleted.changes).toEqual({});
    // the account's log keeps the history of the deleted endpoint; the endpoint itself is gone (404)
    expect((await auditLog(owner, `?endpoint_id=${endpoint.id}`)).status).toBe(404);
  });

  it('records API key and notification channel writes in the account log, and the caller as an API key when one is used', async () => {
    const user = await registerUser(sut.url);
    const headerValue = secretValue('header');
    let keyId = '';
    let key = '';
    let channelId = '';
    let endpointId = '';

    const entries = await recordedDuring(user, async () => {
      ({
        api_key: { id: keyId },
        key,
      } = await createApiKey(sut.url, user, { name: 'CI' }));
      const channel = (
        await expectStatus(
          call(user, 'POST', '/api/notification-channels', {
            type: 'webhook',
            target: `${receiver.url}/notify`,
            events: ['dead_letter'],
          }),
          201,
        )
      ).channel;
      channelId = channel.id;
      secretsSent.push(key, channel.secret as string, headerValue);
      await expectStatus(call(user, 'POST', `/api/notification-channels/${channelId}/test`), 200);
      await expectStatus(call(user, 'DELETE', `/api/notification-channels/${channelId}`), 200);
      endpointId = (await createEndpoint(key)).id;
      await expectStatus(
        call(key, 'PATCH', `/api/endpoints/${endpointId}`, {
          inbound_auth: { type: 'header', name: 'x-hook-key', value: headerValue },
        }),
        200,
      );
      await expectStatus(call(user, 'DELETE', `/api/api-keys/${keyId}`), 200);
    });

    expect(entries.map((entry) => [...summary(entry), entry.actor.type, entry.actor.id])).toEqual([
      ['api_key.created', 'api_key', keyId, 'user', user.id],
      ['notification_channel.created', 'notification_channel', channelId, 'user', user.id],
      ['notification_channel.tested', 'notification_channel', channelId, 'user', user.id],
      ['notification_channel.deleted', 'notification_channel', channelId, 'user', user.id],
      ['endpoint.created', 'endpoint', endpointId, 'api_key', keyId],
      ['endpoint.updated', 'endpoint', endpointId, 'api_key', keyId],
      ['api_key.revoked', 'api_key', keyId, 'user', user.id],
    ]);
    expect(entries.every((entry) => entry.actor.email === user.email && entry.ip === LOCAL_IP)).toBe(true);
    expect(entries[0].changes).toEqual({ name: 'CI' });
    expect(entries[5].changes).toEqual({
      inbound_auth: { type: 'header', name: 'x-hook-key', value: REDACTED },
    });
    // another user's account log shows none of it
    expect(await entriesOf(owner)).not.toContainEqual(expect.objectContaining({ id: entries[0].id }));
  });

  it('records nothing for a refused or failed write, and takes the ip from the socket unless TRUST_PROXY is set', async () => {
    const { id } = await createEndpoint(owner);
    const stranger = await registerUser(sut.url);
    const entries = await recordedDuring(owner, async () => {
      await expectStatus(call(owner, 'PATCH', `/api/endpoints/${id}`, { name: '' }), 400);
      await expectStatus(call(stranger, 'PATCH', `/api/endpoints/${id}`, { name: 'mine' }), 404);
      await expectStatus(call(owner, 'POST', `/api/endpoints/${id}/events/${id}/replay`), 404);
      const forwarded = await api(sut.url, 'PATCH', `/api/endpoints/${id}`, {
        token: owner.accessToken,
        body: { name: 'Renamed' },
        headers: { 'x-forwarded-for': '203.0.113.7' },
      });
      expect(forwarded.status).toBe(200);
    });
    expect(entries.map((entry) => [entry.action, entry.ip])).toEqual([['endpoint.updated', LOCAL_IP]]);
    expect(await entriesOf(stranger)).toEqual([]);
  });

  describe('a write and its entry commit together or not at all', () => {
    /** One audited write: the call, and the rows it changes (as they stand, to compare before and after). */
    interface FaultCase {
      call: () => ReturnType<typeof call>;
      rows: [sql: string, parameters: unknown[]];
      /** What else the call must have done once it succeeded, and not when it failed (since: a Date.now()). */
      sideEffects?: (succeeded: Awaited<ReturnType<typeof call>>, since: number) => Promise<void>;
    }

    const rowsOf = async ([sql, parameters]: FaultCase['rows']) => (await db.query(sql, parameters)).rows;
    const countOf = (table: string, column: string, id: string): FaultCase['rows'] => [
      `select count(*)::int as count from ${table} where ${column} = $1`,
      [id],
    ];
    const newActions = async (after: number) =>
      (await db.query(`select action from audit_log where id > $1 order by id`, [after])).rows.map(
        (row: { action: string }) => row.action,
      );

    /** An endpoint of a new user's, with a destination and a captured event. */
    const endpointWithEvent = async () => {
      const user = await registerUser(sut.url);
      const endpoint = await createEndpoint(user);
      const destinationId = (
        await expectStatus(
          call(user, 'POST', `/api/endpoints/${endpoint.id}/destinations`, { url: `${receiver.url}/hooks` }),
          201,
        )
      ).destination.id as string;
      const captured = await fetch(`${sut.url}/in/${endpoint.public_token}`, { method: 'POST', body: '{}' });
      const eventId = ((await captured.json()) as { id: string }).id;
      return { user, endpointId: endpoint.id, destinationId, eventId };
    };

    const createChannel = (user: RegisteredUser) =>
      call(user, 'POST', '/api/notification-channels', {
        type: 'webhook',
        target: `${receiver.url}/notify`,
        events: ['dead_letter'],
      });

    /** A new user with a webhook notification channel. */
    const userWithChannel = async () => {
      const user = await registerUser(sut.url);
      const channelId = (await expectStatus(createChannel(user), 201)).channel.id as string;
      return { user, channelId };
    };

    /** A pending invitation to `invitee`, made in the database: its token is not mailed (no SMTP here). */
    const invitationOf = async (teamId: string, inviter: RegisteredUser, invitee: RegisteredUser) => {
      const token = randomBytes(32).toString('base64url');
      const { rows } = await db.query<{ id: string }>(
        `insert into team_invitations (team_id, email, role, token_hash, invited_by, expires_at)
         values ($1, lower($2), 'member', $3, $4, now() + interval '1 day') returning id`,
        [teamId, invitee.email, createHash('sha256').update(token).digest('hex'), inviter.id],
      );
      return { token, invitationId: rows[0].id };
    };

    /** A team of a new owner's, with a member. */
    const teamWithMember = async () => {
      const [teamOwner, member] = await Promise.all([registerUser(sut.url), registerUser(sut.url)]);
      const teamId = await createTeam(teamOwner);
      await addMember(teamId, member, 'member');
      return { teamOwner, member, teamId };
    };

    /** For each action: the write, made ready (creates: on a new user or team, whose rows it counts). */
    const CASES: Record<string, () => Promise<FaultCase>> = {
      'endpoint.created': async () => {
        const user = await registerUser(sut.url);
        return {
          call: () => call(user, 'POST', '/api/endpoints', { name: 'Atomic' }),
          rows: countOf('endpoints', 'user_id', user.id),
        };
      },
      'endpoint.updated': async () => {
        const { user, endpointId } = await endpointWithEvent();
        return {
          call: () =>
            call(user, 'PATCH', `/api/endpoints/${endpointId}`, { name: 'Renamed', is_active: false }),
          rows: [`select name, is_active from endpoints where id = $1`, [endpointId]],
        };
      },
      'endpoint.deleted': async () => {
        const { user, endpointId } = await endpointWithEvent();
        return {
          call: () => call(user, 'DELETE', `/api/endpoints/${endpointId}`),
          rows: [
            `select (select count(*) from endpoints where id = $1)::int as endpoints,
                    (select count(*) from events where endpoint_id = $1)::int as events`,
            [endpointId],
          ],
        };
      },
      'destination.created': async () => {
        const { user, endpointId } = await endpointWithEvent();
        return {
          call: () =>
            call(user, 'POST', `/api/endpoints/${endpointId}/destinations`, {
              url: `${receiver.url}/second`,
            }),
          rows: countOf('destinations', 'endpoint_id', endpointId),
        };
      },
      'destination.updated': async () => {
        const { user, endpointId, destinationId } = await endpointWithEvent();
        await expectStatus(
          call(user, 'PATCH', `/api/endpoints/${endpointId}/destinations/${destinationId}`, { paused: true }),
          200,
        );
        return {
          // a resume releases the held backlog in the background: only once the resume has committed
          call: () =>
            call(user, 'PATCH', `/api/endpoints/${endpointId}/destinations/${destinationId}`, {
              url: `${receiver.url}/moved`,
              paused: false,
            }),
          rows: [`select url, paused from destinations where id = $1`, [destinationId]],
        };
      },
      'destination.deleted': async () => {
        const { user, endpointId, destinationId } = await endpointWithEvent();
        return {
          call: () => call(user, 'DELETE', `/api/endpoints/${endpointId}/destinations/${destinationId}`),
          rows: countOf('destinations', 'id', destinationId),
        };
      },
      'event.replayed': async () => {
        const { user, endpointId, eventId } = await endpointWithEvent();
        return {
          call: () => call(user, 'POST', `/api/endpoints/${endpointId}/events/${eventId}/replay`),
          rows: countOf('deliveries', 'event_id', eventId),
        };
      },
      'bulk_replay.created': async () => {
        const { user, endpointId } = await endpointWithEvent();
        return {
          call: () => call(user, 'POST', `/api/endpoints/${endpointId}/bulk-replays`, {}),
          rows: countOf('bulk_replays', 'endpoint_id', endpointId),
          // The replay's Bull job goes once it has committed: the failed call added none. Bull's client sends
          // in order, so once the second call's job is in Redis, a job of the first would be too.
          sideEffects: async (succeeded, since) => {
            const queue = sut.app.get<Queue>(getQueueToken(BULK_REPLAY_QUEUE));
            const replayId = succeeded.body.bulk_replay.id as string;
            const jobs = await eventually(
              () => queue.getJobs(['waiting', 'paused', 'delayed', 'active']),
              (found) => found.some((job) => job.id === replayId),
            );
            expect(jobs.filter((job) => job.timestamp >= since).map((job) => job.id)).toEqual([replayId]);
          },
        };
      },
      'bulk_replay.cancelled': async () => {
        const { user, endpointId } = await endpointWithEvent();
        const base = `/api/endpoints/${endpointId}/bulk-replays`;
        const replayId = (await expectStatus(call(user, 'POST', base, {}), 202)).bulk_replay.id as string;
        return {
          call: () => call(user, 'POST', `${base}/${replayId}/cancel`),
          rows: [`select status from bulk_replays where id = $1`, [replayId]],
        };
      },
      'api_key.created': async () => {
        const user = await registerUser(sut.url);
        return {
          call: () => call(user, 'POST', '/api/api-keys', { name: 'CI' }),
          rows: countOf('api_keys', 'user_id', user.id),
        };
      },
      'api_key.revoked': async () => {
        const user = await registerUser(sut.url);
        const { api_key: apiKey } = await createApiKey(sut.url, user, { name: 'CI' });
        return {
          call: () => call(user, 'DELETE', `/api/api-keys/${apiKey.id}`),
          rows: countOf('api_keys', 'id', apiKey.id),
        };
      },
      'notification_channel.created': async () => {
        const user = await registerUser(sut.url);
        return {
          call: () => createChannel(user),
          rows: countOf('notification_channels', 'user_id', user.id),
        };
      },
      'notification_channel.deleted': async () => {
        const { user, channelId } = await userWithChannel();
        return {
          call: () => call(user, 'DELETE', `/api/notification-channels/${channelId}`),
          rows: countOf('notification_channels', 'id', channelId),
        };
      },
      'issue.updated': async () => {
        const { user, endpointId, destinationId } = await endpointWithEvent();
        const issueId = (
          await db.query<{ id: string }>(
            `insert into issues (endpoint_id, destination_id, kind, summary, failure_count, first_seen_at, last_seen_at)
             values ($1, $2, 'http_5xx', 'HTTP 500', 1, now(), now()) returning id`,
            [endpointId, destinationId],
          )
        ).rows[0].id;
        return {
          call: () => call(user, 'PATCH', `/api/issues/${issueId}`, { status: 'acknowledged' }),
          rows: [`select status from issues where id = $1`, [issueId]],
        };
      },
      'team.updated': async () => {
        const { teamOwner, teamId } = await teamWithMember();
        return {
          call: () => call(teamOwner, 'PATCH', `/api/teams/${teamId}`, { name: 'Renamed' }),
          rows: [`select name from teams where id = $1`, [teamId]],
        };
      },
      'team.deleted': async () => {
        const { teamOwner, teamId } = await teamWithMember();
        return {
          call: () => call(teamOwner, 'DELETE', `/api/teams/${teamId}`),
          rows: countOf('teams', 'id', teamId),
        };
      },
      'team.created': async () => {
        const user = await registerUser(sut.url);
        await db.query(`update users set plan = 'team' where id = $1`, [user.id]);
        return {
          call: () => call(user, 'POST', '/api/teams', { name: 'Atomic' }),
          rows: countOf('team_members', 'user_id', user.id),
        };
      },
      'member.updated': async () => {
        const { teamOwner, member, teamId } = await teamWithMember();
        return {
          call: () =>
            call(teamOwner, 'PATCH', `/api/teams/${teamId}/members/${member.id}`, { role: 'viewer' }),
          rows: [`select role from team_members where team_id = $1`, [teamId]],
        };
      },
      'member.removed': async () => {
        const { teamOwner, member, teamId } = await teamWithMember();
        return {
          call: () => call(teamOwner, 'DELETE', `/api/teams/${teamId}/members/${member.id}`),
          rows: countOf('team_members', 'team_id', teamId),
        };
      },
      'invitation.revoked': async () => {
        const { teamOwner, teamId } = await teamWithMember();
        const { invitationId } = await invitationOf(teamId, teamOwner, await registerUser(sut.url));
        return {
          call: () => call(teamOwner, 'DELETE', `/api/teams/${teamId}/invitations/${invitationId}`),
          rows: countOf('team_invitations', 'id', invitationId),
        };
      },
      'invitation.accepted': async () => {
        const { teamOwner, teamId } = await teamWithMember();
        const invitee = await registerUser(sut.url);
        const { token } = await invitationOf(teamId, teamOwner, invitee);
        return {
          call: () => call(invitee, 'POST', '/api/invitations/accept', { token }),
          rows: countOf('team_members', 'team_id', teamId),
        };
      },
      'invitation.created': async () => {
        const { teamOwner, teamId } = await teamWithMember();
        return {
          call: () =>
            call(teamOwner, 'POST', `/api/teams/${teamId}/invitations`, {
              email: `invited-${randomBytes(4).toString('hex')}@example.com`,
              role: 'member',
            }),
          rows: countOf('team_invitations', 'team_id', teamId),
        };
      },
    };

    beforeAll(async () => {
      // The fault: an insert into audit_log of an action listed in audit_faults fails, as a full disk or a
      // lost connection would at that moment.
      await db.query(`create table audit_faults (action text primary key)`);
      await db.query(`create function audit_fault() returns trigger language plpgsql as $$
        begin
          if exists (select 1 from audit_faults where action = new.action) then
            raise exception 'audit_log refuses %', new.action;
          end if;
          return new;
        end $$`);
      await db.query(
        `create trigger audit_fault before insert on audit_log for each row execute function audit_fault()`,
      );
    });
    afterAll(async () => {
      await db.query(`drop trigger audit_fault on audit_log`);
      await db.query(`drop function audit_fault()`);
      await db.query(`drop table audit_faults`);
    });

    it('tries every audited action but a message sent', () => {
      const audited = Object.values(AUDITED_ROUTES)
        .filter((route) => !route.sends)
        .map((route) => route.action);
      expect(Object.keys(CASES).sort()).toEqual([...new Set(audited)].sort());
    });

    it.each(Object.keys(CASES))(
      '%s: when its entry cannot be stored, nothing of the write is stored and the call answers 500; the next call stores both',
      async (action) => {
        const write = await CASES[action]();
        const before = await rowsOf(write.rows);
        const lastBefore = await lastEntryId();
        const since = Date.now();

        await db.query(`insert into audit_faults (action) values ($1)`, [action]);
        let failed: Awaited<ReturnType<typeof call>>;
        try {
          failed = await write.call();
        } finally {
          await db.query(`delete from audit_faults where action = $1`, [action]);
        }
        expect({ status: failed.status, error: failed.body.error }).toEqual({
          status: 500,
          error: 'Internal Server Error',
        });
        expect(await rowsOf(write.rows)).toEqual(before);
        expect(await newActions(lastBefore)).toEqual([]);

        const succeeded = await write.call();
        expect({ succeeded: succeeded.status < 300, body: succeeded.body }).toEqual({
          succeeded: true,
          body: expect.anything(),
        });
        expect(await rowsOf(write.rows)).not.toEqual(before);
        expect(await newActions(lastBefore)).toEqual([action]);
        await write.sideEffects?.(succeeded, since);
      },
    );

    it('sends a channel test outside any transaction: the message goes, then its entry; a refused entry answers 500', async () => {
      const { user, channelId } = await userWithChannel();
      const testCall = () => call(user, 'POST', `/api/notification-channels/${channelId}/test`);
      const messages = () =>
        receiver.received.filter(
          (request) => request.url === '/notify' && request.body.toString().includes(channelId),
        ).length;
      const lastBefore = await lastEntryId();

      await db.query(`insert into audit_faults (action) values ('notification_channel.tested')`);
      let failed: Awaited<ReturnType<typeof call>>;
      try {
        failed = await testCall();
      } finally {
        await db.query(`delete from audit_faults where action = 'notification_channel.tested'`);
      }
      expect(failed.status).toBe(500);
      expect(messages()).toBe(1);
      expect(await newActions(lastBefore)).toEqual([]);

      expect(await expectStatus(testCall(), 200)).toEqual({ ok: true, error: null });
      expect(messages()).toBe(2);
      expect(await newActions(lastBefore)).toEqual(['notification_channel.tested']);
    });
  });

  it('records a body sent to a route that takes none as no change: it can neither keep the write out of the log nor stall it', async () => {
    const { id } = await createEndpoint(owner);
    // Text that jsonb refuses, and text that kept the URL-password pattern backtracking for minutes.
    const body = { nul: '\u0000', colons: `http://${':'.repeat(200_000)}` };
    const entries = await recordedDuring(owner, () =>
      expectStatus(call(owner, 'DELETE', `/api/endpoints/${id}`, body), 200),
    );
    expect(entries.map((entry) => [...summary(entry), entry.changes])).toEqual([
      ['endpoint.deleted', 'endpoint', id, {}],
    ]);
  });

  describe('reading', () => {
    it('pages the log newest first, filtered by endpoint', async () => {
      const user = await registerUser(sut.url);
      const first = await createEndpoint(user);
      const second = await createEndpoint(user);
      for (const name of ['a', 'b', 'c', 'd', 'e'])
        await expectStatus(call(user, 'PATCH', `/api/endpoints/${first.id}`, { name }), 200);
      await expectStatus(call(user, 'PATCH', `/api/endpoints/${second.id}`, { name: 'other' }), 200);

      const all = await entriesOf(user);
      expect(all.map((entry) => [entry.action, entry.changes.name ?? null])).toEqual([
        ['endpoint.updated', 'other'],
        ...['e', 'd', 'c', 'b', 'a'].map((name) => ['endpoint.updated', name]),
        ['endpoint.created', 'Payments'],
        ['endpoint.created', 'Payments'],
      ]);
      const ids = all.map((entry) => Number(entry.id));
      expect(ids).toEqual([...ids].sort((a, b) => b - a));

      const pages = await Promise.all(
        [1, 2, 3, 4].map((page) => auditLog(user, `?endpoint_id=${first.id}&limit=2&page=${page}`)),
      );
      expect(pages.map((page) => page.status)).toEqual([200, 200, 200, 200]);
      expect(pages.map((page) => page.body.pagination)).toEqual(
        [1, 2, 3, 4].map((page) => ({ page, limit: 2, total: 6, pages: 3 })),
      );
      expect(pages.map((page) => page.body.entries.map((entry: Entry) => entry.changes.name))).toEqual([
        ['e', 'd'],
        ['c', 'b'],
        ['a', 'Payments'],
        [],
      ]);
      expect((await auditLog(user)).body.pagination).toEqual({ page: 1, limit: 50, total: 8, pages: 1 });
    });

    it.each([
      ['team_id=nope', 'team_id must be a UUID'],
      ['endpoint_id=123', 'endpoint_id must be a UUID'],
      ['page=0', 'page must be a whole number from 1 to 1000000'],
      ['page=two', 'page must be a whole number from 1 to 1000000'],
      ['limit=0', 'limit must be a whole number from 1 to 100'],
      ['limit=101', 'limit must be a whole number from 1 to 100'],
      ['limit=1.5', 'limit must be a whole number from 1 to 100'],
      ['actor=me', 'property actor should not exist'],
    ])('answers ?%s with 400: %s', async (query, message) => {
      const response = await auditLog(owner, `?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.message).toContain(message);
    });

    it("shows a team's writes to its admins only; a member gets 403, a stranger 404", async () => {
      const [admin, member, stranger] = await Promise.all([
        registerUser(sut.url),
        registerUser(sut.url),
        registerUser(sut.url),
      ]);
      const ownersOwn = await createEndpoint(owner);
      const teamId = await createTeam(owner);
      await addMember(teamId, admin, 'admin');
      await addMember(teamId, member, 'member');
      const endpointId = (await createEndpoint(owner, { team_id: teamId })).id;
      await expectStatus(call(member, 'PATCH', `/api/endpoints/${endpointId}`, { name: 'By a member' }), 200);
      await expectStatus(call(admin, 'PATCH', `/api/teams/${teamId}`, { name: 'Platform team' }), 200);
      await expectStatus(
        call(admin, 'PATCH', `/api/teams/${teamId}/members/${member.id}`, { role: 'viewer' }),
        200,
      );

      const teamLog = (await entriesOf(admin, `?team_id=${teamId}`)).reverse();
      expect(teamLog.map((entry) => [...summary(entry), entry.actor.id])).toEqual([
        ['team.created', 'team', teamId, owner.id],
        ['endpoint.created', 'endpoint', endpointId, owner.id],
        ['endpoint.updated', 'endpoint', endpointId, member.id],
        ['team.updated', 'team', teamId, admin.id],
        ['member.updated', 'member', member.id, admin.id],
      ]);
      expect((await entriesOf(owner, `?team_id=${teamId}`)).length).toBe(5);
      expect((await entriesOf(admin, `?team_id=${teamId}&endpoint_id=${endpointId}`)).map(summary)).toEqual([
        ['endpoint.updated', 'endpoint', endpointId],
        ['endpoint.created', 'endpoint', endpointId],
      ]);
      // a team's writes are not in anyone's own account log
      const ownLog = await entriesOf(owner);
      expect(ownLog.filter((entry) => [teamId, endpointId].includes(entry.target.id ?? ''))).toEqual([]);
      expect(await entriesOf(member)).toEqual([]);

      // the member (now a viewer) is below admin: 403 on the team's and the team endpoint's log
      for (const query of [`?team_id=${teamId}`, `?endpoint_id=${endpointId}`])
        expect((await auditLog(member, query)).status).toBe(403);
      // a stranger cannot see the team, its endpoint or the owner's own endpoint: 404, as for missing ones
      for (const [query, message] of [
        [`?team_id=${teamId}`, 'team not found'],
        [`?endpoint_id=${endpointId}`, 'endpoint not found'],
        [`?endpoint_id=${ownersOwn.id}`, 'endpoint not found'],
        [`?team_id=00000000-0000-4000-8000-000000000000`, 'team not found'],
      ]) {
        const refused = await auditLog(stranger, query);
        expect({ status: refused.status, message: refused.body.message }).toEqual({ status: 404, message });
      }
      // an admin of the team cannot read another account's endpoint through it
      expect((await auditLog(admin, `?team_id=${teamId}&endpoint_id=${ownersOwn.id}`)).status).toBe(404);

      await expectStatus(call(admin, 'DELETE', `/api/teams/${teamId}/members/${member.id}`), 200);
      expect(summary((await entriesOf(owner, `?team_id=${teamId}`))[0])).toEqual([
        'member.removed',
        'member',
        member.id,
      ]);
      expect((await auditLog(member, `?team_id=${teamId}`)).status).toBe(404);

      // moving one's own endpoint into the team is a write of the account it was in
      await expectStatus(call(owner, 'PATCH', `/api/endpoints/${ownersOwn.id}`, { team_id: teamId }), 200);
      expect(summary((await entriesOf(owner))[0])).toEqual(['endpoint.updated', 'endpoint', ownersOwn.id]);
      expect(summary((await entriesOf(owner, `?team_id=${teamId}`))[0])).toEqual([
        'member.removed',
        'member',
        member.id,
      ]);
      // the endpoint's log is its current home's: its entries from before stay in the account's log
      expect(await entriesOf(admin, `?endpoint_id=${ownersOwn.id}`)).toEqual([]);

      // moved on to another team, the endpoint's entries from the first stay in the first team's log: the
      // second team's admins, who are not in the first, do not see them
      const otherTeamId = await createTeam(owner);
      const otherAdmin = await registerUser(sut.url);
      await addMember(otherTeamId, otherAdmin, 'admin');
      await expectStatus(call(owner, 'PATCH', `/api/endpoints/${endpointId}`, { team_id: otherTeamId }), 200);
      await expectStatus(call(owner, 'PATCH', `/api/endpoints/${endpointId}`, { name: 'Moved' }), 200);
      expect((await entriesOf(otherAdmin, `?endpoint_id=${endpointId}`)).map(summary)).toEqual([
        ['endpoint.updated', 'endpoint', endpointId],
      ]);
      expect(
        (await entriesOf(admin, `?team_id=${teamId}`)).filter((entry) => entry.target.id === endpointId),
      ).toHaveLength(3);
    });
  });

  it('never stores a secret value sent to any route', async () => {
    expect(secretsSent.length).toBeGreaterThanOrEqual(7);
    const { rows } = await db.query<{ text: string; count: string }>(
      `select coalesce(string_agg(a::text, ' '), '') as text, count(*)::text as count from audit_log a`,
    );
    expect(Number(rows[0].count)).toBeGreaterThan(20);
    expect(rows[0].text).toContain(REDACTED);
    expect(secretsSent.filter((secret) => rows[0].text.includes(secret))).toEqual([]);
  });
});
