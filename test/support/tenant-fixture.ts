import { randomBytes } from 'node:crypto';
import type { Client } from 'pg';
import { api, createApiKey, registerUser, type RegisteredUser } from './api-client';

/**
 * A user on the top plan with one endpoint, one captured event, one (signed) destination, one bulk
 * replay (of that event), one API key, one (webhook) notification channel, one issue, and one team they
 * own with another member and a pending invitation. With `endpointInTeam`, the endpoint (and so all
 * under it) is the team's.
 */
export interface Tenant {
  user: RegisteredUser;
  teamId: string;
  /** The other member of the team (role `member`). */
  teamMemberId: string;
  invitationId: string;
  endpointId: string;
  publicToken: string;
  eventId: string;
  destinationId: string;
  bulkReplayId: string;
  apiKeyId: string;
  channelId: string;
  issueId: string;
  /** Unique strings of this tenant's data that must never reach another user. */
  secrets: { destinationSecret: string; eventMarker: string; endpointName: string; apiKey: string };
}

/**
 * Made through the API. The event is captured before the destination exists, so no delivery is
 * pending; in an APP_ROLE=api service no worker dispatches the bulk replay, so nothing changes in the
 * background. The plan is raised in the database (the plan guard
 * reads it from there), so plan-gated routes (AI) get as far as their other checks.
 */
export async function createTenant(
  baseUrl: string,
  db: Client,
  label: string,
  options: { endpointInTeam?: boolean } = {},
): Promise<Tenant> {
  const marker = `${label}-${randomBytes(6).toString('hex')}`;
  const user = await registerUser(baseUrl);
  await db.query(`update users set plan = 'team' where id = $1`, [user.id]);
  const team = await createTeam(baseUrl, db, user, `team ${marker}`);
  const endpoint = await api(baseUrl, 'POST', '/api/endpoints', {
    token: user.accessToken,
    body: { name: `endpoint ${marker}`, team_id: options.endpointInTeam ? team.teamId : null },
  });
  const { id: endpointId, public_token: publicToken } = endpoint.body.endpoint;
  const captured = await fetch(`${baseUrl}/in/${publicToken}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'invoice.paid', owner: `event ${marker}` }),
  });
  const { id: eventId } = (await captured.json()) as { id: string };
  const destinationSecret = `whsec_${marker}`;
  const destination = await api(baseUrl, 'POST', `/api/endpoints/${endpointId}/destinations`, {
    token: user.accessToken,
    body: { url: `https://${label}.example.com/hook`, secret: destinationSecret },
  });
  const bulkReplay = await api(baseUrl, 'POST', `/api/endpoints/${endpointId}/bulk-replays`, {
    token: user.accessToken,
    body: {},
  });
  if (!eventId || destination.status !== 201 || bulkReplay.status !== 202)
    throw new Error(
      `tenant ${label}: capture, destination or bulk replay failed (${destination.status}, ${bulkReplay.status})`,
    );
  const apiKey = await createApiKey(baseUrl, user, { name: `key ${marker}` });
  const channel = await api(baseUrl, 'POST', '/api/notification-channels', {
    token: user.accessToken,
    body: { type: 'webhook', target: `https://${label}.example.com/notify`, events: ['dead_letter'] },
  });
  if (channel.status !== 201)
    throw new Error(`tenant ${label}: notification channel failed (${channel.status})`);
  // An APP_ROLE=api service has no worker to open issues: the tenant's is written as a failure would.
  const issue = await db.query<{ id: string }>(
    `insert into issues (endpoint_id, destination_id, kind, summary, failure_count, first_seen_at,
                         last_seen_at, last_event_id)
     values ($1, $2, 'http_5xx', 'HTTP 500 Internal Server Error', 1, now(), now(), $3) returning id`,
    [endpointId, destination.body.destination.id, eventId],
  );
  return {
    user,
    ...team,
    endpointId,
    publicToken,
    eventId,
    destinationId: destination.body.destination.id,
    bulkReplayId: bulkReplay.body.bulk_replay.id,
    apiKeyId: apiKey.api_key.id,
    channelId: channel.body.channel.id,
    issueId: issue.rows[0].id,
    secrets: {
      destinationSecret,
      eventMarker: `event ${marker}`,
      endpointName: `endpoint ${marker}`,
      apiKey: apiKey.key,
    },
  };
}

/**
 * How to get a real id of a tenant for each path parameter name of the API. A route with a path
 * parameter that is not here makes the generated tests fail: add its recipe.
 */
export function pathRecipes(tenant: Tenant): Record<string, string> {
  return {
    id: tenant.endpointId,
    eId: tenant.eventId,
    dId: tenant.destinationId,
    rId: tenant.bulkReplayId,
    kid: tenant.apiKeyId,
    cid: tenant.channelId,
    iid: tenant.issueId,
    tid: tenant.teamId,
    uid: tenant.teamMemberId,
    invid: tenant.invitationId,
  };
}

/**
 * A team owned by `owner`, made through the API, with one more user in it as a `member` and one pending
 * invitation. The member is added in the database: an invitation's token travels only by mail.
 */
export async function createTeam(
  baseUrl: string,
  db: Client,
  owner: RegisteredUser,
  name: string,
): Promise<{ teamId: string; teamMemberId: string; invitationId: string }> {
  const team = await api(baseUrl, 'POST', '/api/teams', { token: owner.accessToken, body: { name } });
  if (team.status !== 201) throw new Error(`team ${name}: ${team.status} ${JSON.stringify(team.body)}`);
  const teamId: string = team.body.team.id;
  const member = await registerUser(baseUrl);
  await addTeamMember(db, teamId, member.id, 'member');
  const invitation = await api(baseUrl, 'POST', `/api/teams/${teamId}/invitations`, {
    token: owner.accessToken,
    body: { email: `invited-${randomBytes(6).toString('hex')}@example.com`, role: 'viewer' },
  });
  if (invitation.status !== 201) throw new Error(`invitation of ${name}: ${invitation.status}`);
  return { teamId, teamMemberId: member.id, invitationId: invitation.body.invitation.id };
}

/** Makes the user a member of the team with the role, in the database (as an accepted invitation would). */
export async function addTeamMember(db: Client, teamId: string, userId: string, role: string): Promise<void> {
  await db.query(`insert into team_members (team_id, user_id, role) values ($1, $2, $3)`, [
    teamId,
    userId,
    role,
  ]);
}

/** A fingerprint of every row of every table: equal fingerprints mean nothing was written. */
export async function databaseFingerprint(db: Client): Promise<Record<string, string>> {
  const tables = await db.query<{ name: string }>(
    `select table_name as name from information_schema.tables
     where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`,
  );
  const sql = tables.rows
    .map(
      ({ name }) =>
        `select '${name}' as name, count(*)::text || ':' || md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest from "${name}" t`,
    )
    .join(' union all ');
  const { rows } = await db.query<{ name: string; digest: string }>(sql);
  return Object.fromEntries(rows.map((row) => [row.name, row.digest]));
}
