import { Client } from 'pg';
import { api, createApiKey, registerUser, type RegisteredUser } from './support/api-client';
import { SseClient } from './support/sse-client';
import { startTestApp, type TestApp } from './support/test-app';
import { addTeamMember } from './support/tenant-fixture';

/**
 * Endpoints in teams (README, "Teams"): created in a team, moved in and out, read and written by the
 * team's members according to their roles, and their `retention_days`. Teams are made in the database
 * here, so that these tests depend on the endpoints' part alone (test/teams.e2e-spec.ts tests the teams API).
 */
describe('team endpoints', () => {
  let sut: TestApp;
  let db: Client;
  let owner: RegisteredUser;
  let viewer: RegisteredUser;
  let member: RegisteredUser;
  let admin: RegisteredUser;
  let stranger: RegisteredUser;
  let teamId: string;
  let otherTeamId: string;

  const as = (user: RegisteredUser, method: string, path: string, body?: unknown) =>
    api(sut.url, method, path, { token: user.accessToken, body });
  const newTeam = async (name: string) =>
    (await db.query<{ id: string }>(`insert into teams (name) values ($1) returning id`, [name])).rows[0].id;
  const create = async (user: RegisteredUser, body: Record<string, unknown>) => {
    const response = await as(user, 'POST', '/api/endpoints', { name: 'shared', ...body });
    expect(response.status).toBe(201);
    return response.body.endpoint;
  };
  const stored = async (id: string) =>
    (
      await db.query<{ team_id: string | null; user_id: string; retention_days: number | null }>(
        `select team_id, user_id, retention_days from endpoints where id = $1`,
        [id],
      )
    ).rows[0];

  beforeAll(async () => {
    sut = await startTestApp({ APP_ROLE: 'api' });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    [owner, viewer, member, admin, stranger] = await Promise.all(
      Array.from({ length: 5 }, () => registerUser(sut.url)),
    );
    teamId = await newTeam('Payments');
    otherTeamId = await newTeam('Search');
    await addTeamMember(db, teamId, owner.id, 'owner');
    await addTeamMember(db, teamId, viewer.id, 'viewer');
    await addTeamMember(db, teamId, member.id, 'member');
    await addTeamMember(db, teamId, admin.id, 'admin');
    await addTeamMember(db, otherTeamId, member.id, 'member');
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
  });

  it("creates an endpoint in a team: every member lists it with their role, a stranger doesn't", async () => {
    const endpoint = await create(member, { team_id: teamId });
    expect(endpoint).toMatchObject({ team_id: teamId, role: 'member', user_id: member.id });
    const seen = async (user: RegisteredUser) =>
      (await as(user, 'GET', '/api/endpoints')).body.endpoints.find(
        (listed: { id: string }) => listed.id === endpoint.id,
      );
    expect(await seen(owner)).toMatchObject({ role: 'owner', team_id: teamId });
    expect(await seen(viewer)).toMatchObject({ role: 'viewer' });
    expect(await seen(admin)).toMatchObject({ role: 'admin' });
    expect(await seen(stranger)).toBeUndefined();
    expect((await as(viewer, 'GET', `/api/endpoints/${endpoint.id}`)).body.endpoint.role).toBe('viewer');
    expect((await as(stranger, 'GET', `/api/endpoints/${endpoint.id}`)).status).toBe(404);
  });

  it('takes a team id in upper case as the same team: answered in lower case, a move to it changes nothing', async () => {
    const endpoint = await create(member, { team_id: teamId.toUpperCase() });
    expect(endpoint.team_id).toBe(teamId);
    const same = await as(member, 'PATCH', `/api/endpoints/${endpoint.id}`, {
      team_id: teamId.toUpperCase(),
    });
    expect({ status: same.status, team_id: same.body.endpoint?.team_id }).toEqual({
      status: 200,
      team_id: teamId,
    });
    expect((await stored(endpoint.id)).team_id).toBe(teamId);
  });

  it('lets a viewer read a team endpoint but not change it (403), and a member change it', async () => {
    const endpoint = await create(owner, { team_id: teamId });
    const refused = await as(viewer, 'PATCH', `/api/endpoints/${endpoint.id}`, { name: 'renamed' });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/viewer.*endpoint\.write.*member/);
    expect((await as(viewer, 'DELETE', `/api/endpoints/${endpoint.id}`)).status).toBe(403);
    expect((await stored(endpoint.id)).team_id).toBe(teamId);
    const changed = await as(member, 'PATCH', `/api/endpoints/${endpoint.id}`, { name: 'renamed' });
    expect(changed.status).toBe(200);
    expect(changed.body.endpoint).toMatchObject({ name: 'renamed', role: 'member' });
    expect((await as(member, 'DELETE', `/api/endpoints/${endpoint.id}`)).status).toBe(200);
  });

  it('refuses to create in a team the caller is not in (404) or only views (403), and writes nothing', async () => {
    const before = (await db.query(`select count(*)::int as n from endpoints`)).rows[0].n;
    const notIn = await as(stranger, 'POST', '/api/endpoints', { name: 'x', team_id: teamId });
    expect(notIn.status).toBe(404);
    expect(notIn.body.message).toBe('team not found');
    const missing = await as(owner, 'POST', '/api/endpoints', {
      name: 'x',
      team_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe(notIn.body.message);
    expect((await as(viewer, 'POST', '/api/endpoints', { name: 'x', team_id: teamId })).status).toBe(403);
    const bad = await as(owner, 'POST', '/api/endpoints', { name: 'x', team_id: 'payments' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual(['team_id must be a team id (a UUID) or null']);
    expect((await db.query(`select count(*)::int as n from endpoints`)).rows[0].n).toBe(before);
  });

  it('moves an endpoint into a team (member there) and out of it (admin of it) to the mover', async () => {
    const own = await create(member, {});
    expect(own).toMatchObject({ team_id: null, role: 'owner' });
    const moved = await as(member, 'PATCH', `/api/endpoints/${own.id}`, { team_id: teamId });
    expect(moved.status).toBe(200);
    expect(moved.body.endpoint).toMatchObject({ team_id: teamId, role: 'member' });
    expect((await as(viewer, 'GET', `/api/endpoints/${own.id}`)).status).toBe(200);

    // out of the team, or on to another: an admin of the team it leaves
    const out = await as(member, 'PATCH', `/api/endpoints/${own.id}`, { team_id: otherTeamId });
    expect(out.status).toBe(403);
    expect((await stored(own.id)).team_id).toBe(teamId);
    const back = await as(admin, 'PATCH', `/api/endpoints/${own.id}`, { team_id: null, name: 'mine now' });
    expect(back.status).toBe(200);
    expect(back.body.endpoint).toMatchObject({
      team_id: null,
      role: 'owner',
      user_id: admin.id,
      name: 'mine now',
    });
    expect(await stored(own.id)).toMatchObject({ team_id: null, user_id: admin.id });
    expect((await as(member, 'GET', `/api/endpoints/${own.id}`)).status).toBe(404);
  });

  it('refuses to move an endpoint into a team the caller is not in, changing nothing', async () => {
    const own = await create(stranger, {});
    const moved = await as(stranger, 'PATCH', `/api/endpoints/${own.id}`, {
      team_id: teamId,
      name: 'sneaky',
    });
    expect(moved.status).toBe(404);
    expect(await stored(own.id)).toMatchObject({ team_id: null, user_id: stranger.id });
    expect((await as(stranger, 'GET', `/api/endpoints/${own.id}`)).body.endpoint.name).toBe('shared');
  });

  it('takes a removed member’s access at once, for their session and their API key', async () => {
    const leaving = await registerUser(sut.url);
    await addTeamMember(db, teamId, leaving.id, 'member');
    const key = await createApiKey(sut.url, leaving, { name: 'ci' });
    const endpoint = await create(owner, { team_id: teamId });
    const read = (token: string) => api(sut.url, 'GET', `/api/endpoints/${endpoint.id}/events`, { token });
    expect((await read(leaving.accessToken)).status).toBe(200);
    expect((await read(key.key)).status).toBe(200);
    await db.query(`delete from team_members where team_id = $1 and user_id = $2`, [teamId, leaving.id]);
    expect((await read(leaving.accessToken)).status).toBe(404);
    expect((await read(key.key)).status).toBe(404);
  });

  it("ends a member's live stream when they are removed, and every stream when the endpoint leaves the team", async () => {
    const streams: SseClient[] = [];
    const ended = (stream: SseClient) =>
      Promise.race([
        stream.closed.then(() => 'ended'),
        new Promise((resolve) => setTimeout(resolve, 10_000, 'still open after 10 s')),
      ]);
    try {
      const leaving = await registerUser(sut.url);
      await addTeamMember(db, teamId, leaving.id, 'viewer');
      const endpoint = await create(owner, { team_id: teamId });
      const streamUrl = `${sut.url}/api/endpoints/${endpoint.id}/events/stream`;
      const [doomed, staying] = await Promise.all(
        [leaving, viewer].map((user) => SseClient.open(streamUrl, user.accessToken)),
      );
      streams.push(doomed, staying);
      expect([doomed.status, staying.status]).toEqual([200, 200]);
      const removed = await as(admin, 'DELETE', `/api/teams/${teamId}/members/${leaving.id}`);
      expect(removed.status).toBe(200);
      expect(await ended(doomed)).toBe('ended');
      expect((await SseClient.open(streamUrl, leaving.accessToken)).status).toBe(404);

      const captured = await fetch(`${sut.url}/in/${endpoint.public_token}`, {
        method: 'POST',
        body: 'still here',
      });
      expect(captured.status).toBe(200);
      await staying.waitFor((message) => message.event === 'event.created');
      const moved = await as(admin, 'PATCH', `/api/endpoints/${endpoint.id}`, { team_id: null });
      expect(moved.status).toBe(200);
      expect(await ended(staying)).toBe('ended');
      expect((await SseClient.open(streamUrl, viewer.accessToken)).status).toBe(404);
    } finally {
      streams.forEach((stream) => stream.close());
    }
  });

  it('sets, reads back and clears retention_days, and refuses bad values naming the field', async () => {
    const endpoint = await create(owner, { retention_days: 14 });
    expect(endpoint.retention_days).toBe(14);
    const cleared = await as(owner, 'PATCH', `/api/endpoints/${endpoint.id}`, { retention_days: null });
    expect(cleared.body.endpoint.retention_days).toBeNull();
    for (const value of [0, 3651, 1.5, '7', true]) {
      const refused = await as(owner, 'PATCH', `/api/endpoints/${endpoint.id}`, { retention_days: value });
      expect(refused.status).toBe(400);
      expect(refused.body.message.join(' ')).toMatch(/^retention_days must be/);
    }
    expect((await stored(endpoint.id)).retention_days).toBeNull();
    const longest = await as(owner, 'PATCH', `/api/endpoints/${endpoint.id}`, { retention_days: 3650 });
    expect(longest.body.endpoint.retention_days).toBe(3650);
  });
});
