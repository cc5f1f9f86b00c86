import { createHash } from 'node:crypto';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { Client } from 'pg';
import { SMTP_TIMEOUTS_MS } from '../src/outbound/mail-transport.module';
import { api, createApiKey, registerUser, type RegisteredUser, uniqueEmail } from './support/api-client';
import { eventually } from './support/eventually';
import { SmtpSink } from './support/smtp-sink';
import { databaseFingerprint } from './support/tenant-fixture';
import { startTestApp, type TestApp } from './support/test-app';

const MISSING_ID = '00000000-0000-4000-8000-000000000000';
/** The token of an invitation mail's link: 32 random bytes, base64url. */
const LINK_TOKEN = /#\/invitations\/accept\?token=([A-Za-z0-9_-]{43})\s/;

type Role = 'owner' | 'admin' | 'member' | 'viewer';

interface Team {
  id: string;
  name: string;
  role: Role;
  member_count: number;
  created_at: string;
}

describe('teams', () => {
  let sut: TestApp;
  let smtp: SmtpSink;
  let db: Client;

  const call = (method: string, path: string, caller: RegisteredUser | string, body?: unknown) =>
    api(sut.url, method, `/api${path}`, {
      token: typeof caller === 'string' ? caller : caller.accessToken,
      body,
    });

  /** A user on the team plan (raised in the database, as `npm run cli -- set-plan` does). */
  const teamPlanUser = async (): Promise<RegisteredUser> => {
    const user = await registerUser(sut.url);
    await db.query(`update users set plan = 'team' where id = $1`, [user.id]);
    return user;
  };

  const createTeam = async (owner: RegisteredUser, name = 'Payments'): Promise<Team> => {
    const created = await call('POST', '/teams', owner, { name });
    expect(created.status).toBe(201);
    return created.body.team as Team;
  };

  /** The token in the latest invitation mail to `email`, once it has arrived. */
  const tokenMailedTo = async (email: string, mailsBefore: number): Promise<string> => {
    const mail = await eventually(
      async () => smtp.mails.slice(mailsBefore).find((received) => received.to.includes(email.toLowerCase())),
      (found) => found !== undefined,
    );
    const token = LINK_TOKEN.exec(mail!.text)?.[1];
    if (!token) throw new Error(`no invitation link in the mail: ${mail!.text}`);
    return token;
  };

  /** Invites `email` to the team as `inviter`; answers the invitation and the token of its mail. */
  const invite = async (inviter: RegisteredUser, teamId: string, email: string, role: Role) => {
    const mailsBefore = smtp.mails.length;
    const created = await call('POST', `/teams/${teamId}/invitations`, inviter, { email, role });
    expect(created.status).toBe(201);
    return { invitation: created.body.invitation, token: await tokenMailedTo(email, mailsBefore) };
  };

  const accept = (user: RegisteredUser | string, token: string) =>
    call('POST', '/invitations/accept', user, { token });

  /** A new user who joined the team with `role`, invited and accepted through the API. */
  const joinedMember = async (
    owner: RegisteredUser,
    teamId: string,
    role: Exclude<Role, 'owner'>,
  ): Promise<RegisteredUser> => {
    const user = await registerUser(sut.url);
    const { token } = await invite(owner, teamId, user.email, role);
    expect((await accept(user, token)).status).toBe(200);
    return user;
  };

  const roles = async (teamId: string, caller: RegisteredUser) =>
    Object.fromEntries(
      (
        (await call('GET', `/teams/${teamId}/members`, caller)).body.members as {
          user: { id: string };
          role: Role;
        }[]
      ).map((member) => [member.user.id, member.role]),
    );

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    // APP_ROLE=api: no worker writes in the background, so "nothing written" can be checked on the whole database.
    sut = await startTestApp({ APP_ROLE: 'api', SMTP_URL: smtp.url });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await sut?.close();
    await smtp?.close();
  });

  it('creates a team on the team plan with its creator as owner; the free plan gets 403 upgrade_required', async () => {
    const owner = await teamPlanUser();
    const created = await call('POST', '/teams', owner, { name: '  Payments  ' });
    expect(created.status).toBe(201);
    const team = created.body.team as Team;
    expect(team).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Payments',
      role: 'owner',
      member_count: 1,
      created_at: expect.any(String),
    });
    expect(Date.parse(team.created_at)).toBeGreaterThan(Date.now() - 60_000);

    expect((await call('GET', '/teams', owner)).body).toEqual({ teams: [team] });
    expect((await call('GET', `/teams/${team.id}`, owner)).body).toEqual({ team });
    const members = await call('GET', `/teams/${team.id}/members`, owner);
    expect(members.status).toBe(200);
    expect(members.body.members).toEqual([
      {
        user: { id: owner.id, email: owner.email, name: 'Test User' },
        role: 'owner',
        joined_at: team.created_at,
      },
    ]);

    const renamed = await call('PATCH', `/teams/${team.id}`, owner, { name: 'Billing' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.team).toEqual({ ...team, name: 'Billing' });

    const free = await registerUser(sut.url);
    const teamsBefore = (await db.query('select count(*)::int as count from teams')).rows[0].count;
    const refused = await call('POST', '/teams', free, { name: 'Not yet' });
    expect(refused.status).toBe(403);
    expect(refused.body.upgrade_required).toBe(true);
    expect((await db.query('select count(*)::int as count from teams')).rows[0].count).toBe(teamsBefore);
    expect((await call('GET', '/teams', free)).body).toEqual({ teams: [] });
  });

  it('mails an invitation with a single-use link; the invitee, signed in with that address, joins with its role', async () => {
    const owner = await teamPlanUser();
    const team = await createTeam(owner);
    // Invited in capitals: the address is compared case-insensitively, and the invitee is on the free plan.
    const invitee = await registerUser(sut.url, uniqueEmail('invitee'));
    const mailsBefore = smtp.mails.length;
    const created = await call('POST', `/teams/${team.id}/invitations`, owner, {
      email: invitee.email.toUpperCase(),
      role: 'viewer',
    });
    expect(created.status).toBe(201);
    const invitation = created.body.invitation;
    expect(invitation).toEqual({
      id: expect.any(String),
      email: invitee.email,
      role: 'viewer',
      expires_at: expect.any(String),
      created_at: expect.any(String),
    });
    const validFor = Date.parse(invitation.expires_at) - Date.parse(invitation.created_at);
    expect(Math.abs(validFor - 7 * 86_400_000)).toBeLessThan(1_000);

    const token = await tokenMailedTo(invitee.email, mailsBefore);
    const mail = smtp.mails.slice(mailsBefore).find((received) => received.to.includes(invitee.email))!;
    expect(mail.text).toContain('Test User invited you to join the team "Payments" on Hooktrail as viewer');
    expect(mail.text).toContain(`${sut.env.siteUrl}/#/invitations/accept?token=${token}`);
    const stored = await db.query('select token_hash from team_invitations where id = $1', [invitation.id]);
    expect(stored.rows[0].token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify((await db.query('select * from team_invitations')).rows)).not.toContain(token);
    expect((await call('GET', `/teams/${team.id}/invitations`, owner)).body).toEqual({
      invitations: [invitation],
    });

    const accepted = await accept(invitee, token);
    expect(accepted.status).toBe(200);
    expect(accepted.body.team).toEqual({ ...team, role: 'viewer', member_count: 2 });
    expect(await roles(team.id, owner)).toEqual({ [owner.id]: 'owner', [invitee.id]: 'viewer' });
    expect((await call('GET', '/teams', invitee)).body.teams).toEqual([accepted.body.team]);
    expect((await call('GET', `/teams/${team.id}/invitations`, owner)).body).toEqual({ invitations: [] });

    const again = await accept(invitee, token);
    expect(again.status).toBe(400);
    expect(again.body.message).toContain('token');
    // Inviting a member is refused: their address is one of the team's already.
    const member = await call('POST', `/teams/${team.id}/invitations`, owner, {
      email: invitee.email,
      role: 'admin',
    });
    expect(member.status).toBe(409);
    expect(member.body.message).toContain('already a member');
  });

  it('refuses an expired token (400) and another address (403, the invitation left usable)', async () => {
    const owner = await teamPlanUser();
    const team = await createTeam(owner);
    const invitee = await registerUser(sut.url);
    const stranger = await registerUser(sut.url);

    const expired = await invite(owner, team.id, invitee.email, 'member');
    await db.query(`update team_invitations set expires_at = now() - interval '1 second' where id = $1`, [
      expired.invitation.id,
    ]);
    const late = await accept(invitee, expired.token);
    expect(late.status).toBe(400);
    expect(late.body.message).toContain('token');
    expect((await call('GET', `/teams/${team.id}/invitations`, owner)).body.invitations).toEqual([]);

    const { token } = await invite(owner, team.id, invitee.email, 'member');
    const wrongUser = await accept(stranger, token);
    expect(wrongUser.status).toBe(403);
    expect((await call('GET', `/teams/${team.id}`, stranger)).status).toBe(404);
    const unknown = await accept(invitee, 'x'.repeat(43));
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('token');

    expect((await accept(invitee, token)).status).toBe(200);
    expect(await roles(team.id, owner)).toEqual({ [owner.id]: 'owner', [invitee.id]: 'member' });
  });

  it('lets exactly one of two concurrent accepts of one token win', async () => {
    const owner = await teamPlanUser();
    const team = await createTeam(owner);
    const invitee = await registerUser(sut.url);
    const { token } = await invite(owner, team.id, invitee.email, 'member');
    const { key } = await createApiKey(sut.url, invitee);

    const answers = await Promise.all([accept(invitee, token), accept(key, token)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
    const rows = await db.query('select user_id, role from team_members where team_id = $1 order by role', [
      team.id,
    ]);
    expect(rows.rows).toEqual([
      { user_id: invitee.id, role: 'member' },
      { user_id: owner.id, role: 'owner' },
    ]);
  });

  it('answers 409 to an invitee who joined the team meanwhile, leaving the invitation unused', async () => {
    const owner = await teamPlanUser();
    const team = await createTeam(owner);
    const invitee = await registerUser(sut.url);
    const { invitation, token } = await invite(owner, team.id, invitee.email, 'viewer');
    // Joined another way (a second invitation accepted at the same moment): written as the API would.
    await db.query(`insert into team_members (team_id, user_id, role) values ($1, $2, 'member')`, [
      team.id,
      invitee.id,
    ]);
    const answer = await accept(invitee, token);
    expect(answer.status).toBe(409);
    const stored = await db.query('select accepted_at from team_invitations where id = $1', [invitation.id]);
    expect(stored.rows[0].accepted_at).toBeNull();
  });

  it('replaces an earlier invitation to the same address, and revokes one on request', async () => {
    const owner = await teamPlanUser();
    const team = await createTeam(owner);
    const other = await createTeam(owner, 'Other');
    const email = uniqueEmail('twice');
    const first = await invite(owner, team.id, email, 'viewer');
    const second = await invite(owner, team.id, email, 'admin');
    expect((await call('GET', `/teams/${team.id}/invitations`, owner)).body.invitations).toEqual([
      second.invitation,
    ]);
    const invitee = await registerUser(sut.url, email);
    expect((await accept(invitee, first.token)).status).toBe(400);

    // Another team's invitation is not found through this team.
    expect(
      (await call('DELETE', `/teams/${other.id}/invitations/${second.invitation.id}`, owner)).status,
    ).toBe(404);
    expect((await call('DELETE', `/teams/${team.id}/invitations/${MISSING_ID}`, owner)).status).toBe(404);
    expect((await call('DELETE', `/teams/${team.id}/invitations/not-a-uuid`, owner)).status).toBe(404);
    const revoked = await call('DELETE', `/teams/${team.id}/invitations/${second.invitation.id}`, owner);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ ok: true });
    expect((await call('GET', `/teams/${team.id}/invitations`, owner)).body.invitations).toEqual([]);
    const refused = await accept(invitee, second.token);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('token');
  });

  it('applies the role rules: admins manage non-owners, owners make owners, a team keeps one owner', async () => {
    const owner = await teamPlanUser();
    const team = await createTeam(owner);
    const admin = await joinedMember(owner, team.id, 'admin');
    const member = await joinedMember(owner, team.id, 'member');
    const viewer = await joinedMember(owner, team.id, 'viewer');
    const setRole = (caller: RegisteredUser, target: RegisteredUser | string, role: string) =>
      call('PATCH', `/teams/${team.id}/members/${typeof target === 'string' ? target : target.id}`, caller, {
        role,
      });
    const remove = (caller: RegisteredUser, target: RegisteredUser) =>
      call('DELETE', `/teams/${team.id}/members/${target.id}`, caller);

    const changed = await setRole(admin, member, 'viewer');
    expect(changed.status).toBe(200);
    expect(changed.body.member).toEqual({
      user: { id: member.id, email: member.email, name: 'Test User' },
      role: 'viewer',
      joined_at: expect.any(String),
    });
    expect((await setRole(admin, member, 'member')).status).toBe(200);

    // Too low a role: 403, and nothing changes.
    expect((await setRole(member, viewer, 'member')).status).toBe(403);
    expect((await remove(viewer, member)).status).toBe(403);
    expect((await setRole(admin, member, 'owner')).status).toBe(403);
    expect((await setRole(admin, owner, 'admin')).status).toBe(403);
    expect((await remove(admin, owner)).status).toBe(403);
    expect((await call('PATCH', `/teams/${team.id}`, viewer, { name: 'Mine' })).status).toBe(403);
    expect((await call('GET', `/teams/${team.id}/invitations`, member)).status).toBe(403);
    expect((await call('DELETE', `/teams/${team.id}`, admin)).status).toBe(403);

    // The last owner can neither be demoted nor leave.
    const demoted = await setRole(owner, owner, 'admin');
    expect(demoted.status).toBe(409);
    expect(demoted.body.message).toContain('owner');
    expect((await remove(owner, owner)).status).toBe(409);

    expect((await setRole(owner, MISSING_ID, 'viewer')).status).toBe(404);
    expect((await setRole(owner, 'not-a-uuid', 'viewer')).status).toBe(404);
    const outsider = await registerUser(sut.url);
    expect((await remove(owner, outsider)).status).toBe(404);
    expect(await roles(team.id, owner)).toEqual({
      [owner.id]: 'owner',
      [admin.id]: 'admin',
      [member.id]: 'member',
      [viewer.id]: 'viewer',
    });

    // With a second owner, the first may leave; the viewer may leave too.
    expect((await setRole(owner, admin, 'owner')).status).toBe(200);
    expect((await remove(owner, owner)).status).toBe(200);
    expect((await remove(viewer, viewer)).status).toBe(200);
    expect((await setRole(admin, admin, 'member')).status).toBe(409);
    expect(await roles(team.id, admin)).toEqual({ [admin.id]: 'owner', [member.id]: 'member' });
    expect((await call('GET', `/teams/${team.id}`, admin)).body.team.member_count).toBe(2);
  });

  it("ends a removed member's access at once, with their access token and their API key", async () => {
    const owner = await teamPlanUser();
    const team = await createTeam(owner);
    const member = await joinedMember(owner, team.id, 'member');
    const { key } = await createApiKey(sut.url, member);
    const endpoint = await call('POST', '/endpoints', owner, { name: 'Team hooks', team_id: team.id });
    expect(endpoint.status).toBe(201);
    const endpointId = endpoint.body.endpoint.id;

    for (const credential of [member.accessToken, key]) {
      expect((await call('GET', `/teams/${team.id}`, credential)).status).toBe(200);
      expect((await call('GET', `/endpoints/${endpointId}`, credential)).status).toBe(200);
    }
    expect((await call('DELETE', `/teams/${team.id}/members/${member.id}`, owner)).status).toBe(200);
    for (const credential of [member.accessToken, key]) {
      expect((await call('GET', `/teams/${team.id}`, credential)).status).toBe(404);
      expect((await call('GET', `/teams/${team.id}/members`, credential)).status).toBe(404);
      expect((await call('GET', `/endpoints/${endpointId}`, credential)).status).toBe(404);
      expect((await call('GET', '/teams', credential)).body).toEqual({ teams: [] });
      const listed = (await call('GET', '/endpoints', credential)).body.endpoints as { id: string }[];
      expect(listed.map((listedEndpoint) => listedEndpoint.id)).not.toContain(endpointId);
    }
  });

  it('deletes a team only once no endpoint belongs to it', async () => {
    const owner = await teamPlanUser();
    const team = await createTeam(owner);
    await invite(owner, team.id, uniqueEmail('pending'), 'viewer');
    const endpoint = await call('POST', '/endpoints', owner, { name: 'Team hooks', team_id: team.id });
    expect(endpoint.status).toBe(201);

    const refused = await call('DELETE', `/teams/${team.id}`, owner);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('move or delete its 1 endpoint first');
    expect((await call('GET', `/teams/${team.id}`, owner)).status).toBe(200);

    expect((await call('DELETE', `/endpoints/${endpoint.body.endpoint.id}`, owner)).status).toBe(200);
    const deleted = await call('DELETE', `/teams/${team.id}`, owner);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ ok: true });
    expect((await call('GET', `/teams/${team.id}`, owner)).status).toBe(404);
    for (const table of ['teams', 'team_members', 'team_invitations']) {
      const column = table === 'teams' ? 'id' : 'team_id';
      const left = await db.query(`select count(*)::int as count from ${table} where ${column} = $1`, [
        team.id,
      ]);
      expect(left.rows[0].count).toBe(0);
    }
  });

  it('answers 400 naming the field to bad input, and writes and mails nothing', async () => {
    const owner = await teamPlanUser();
    const team = await createTeam(owner);
    const member = await joinedMember(owner, team.id, 'member');
    const before = await databaseFingerprint(db);
    const mailsBefore = smtp.mails.length;
    const cases: [string, string, unknown, string][] = [
      ['POST', '/teams', {}, 'name'],
      [
        'POST',
        '/teams',
        { name: '   ' },
        'name must be 1 to 100 characters, not counting spaces at either end',
      ],
      ['POST', '/teams', { name: 'x'.repeat(101) }, 'name'],
      ['POST', '/teams', { name: 42 }, 'name'],
      ['POST', '/teams', { name: 'Ok', plan: 'free' }, 'plan'],
      [
        'PATCH',
        `/teams/${team.id}`,
        { name: '  ' },
        'name must be 1 to 100 characters, not counting spaces at either end',
      ],
      ['PATCH', `/teams/${team.id}/members/${member.id}`, { role: 'boss' }, 'role'],
      ['PATCH', `/teams/${team.id}/members/${member.id}`, {}, 'role'],
      ['POST', `/teams/${team.id}/invitations`, { email: 'not-an-address', role: 'member' }, 'email'],
      ['POST', `/teams/${team.id}/invitations`, { email: uniqueEmail(), role: 'owner' }, 'role'],
      ['POST', `/teams/${team.id}/invitations`, { role: 'member' }, 'email'],
      ['POST', '/invitations/accept', {}, 'token'],
      ['POST', '/invitations/accept', { token: 42 }, 'token'],
      ['POST', '/invitations/accept', { token: 'x'.repeat(201) }, 'token'],
    ];
    for (const [method, path, body, field] of cases) {
      const answer = await call(method, path, owner, body);
      expect({ method, path, body, status: answer.status }).toEqual({ method, path, body, status: 400 });
      expect(JSON.stringify(answer.body.message)).toContain(field);
    }
    expect(await databaseFingerprint(db)).toEqual(before);
    expect(smtp.mails.length).toBe(mailsBefore);
  });

  it('answers 404 to a stranger on every team route, as for a team that does not exist, and changes nothing', async () => {
    const owner = await teamPlanUser();
    const team = await createTeam(owner);
    const member = await joinedMember(owner, team.id, 'member');
    const { invitation } = await invite(owner, team.id, uniqueEmail('pending'), 'viewer');
    const stranger = await teamPlanUser();
    const routes: [string, string, unknown?][] = [
      ['GET', '/teams/{tid}'],
      ['PATCH', '/teams/{tid}', { name: 'Taken' }],
      ['DELETE', '/teams/{tid}'],
      ['GET', '/teams/{tid}/members'],
      ['PATCH', `/teams/{tid}/members/${member.id}`, { role: 'viewer' }],
      ['DELETE', `/teams/{tid}/members/${member.id}`],
      ['POST', '/teams/{tid}/invitations', { email: stranger.email, role: 'admin' }],
      ['GET', '/teams/{tid}/invitations'],
      ['DELETE', `/teams/{tid}/invitations/${invitation.id}`],
    ];
    const before = await databaseFingerprint(db);
    const mailsBefore = smtp.mails.length;
    for (const [method, path, body] of routes) {
      const intruding = await call(method, path.replace('{tid}', team.id), stranger, body);
      const missing = await call(method, path.replace('{tid}', MISSING_ID), stranger, body);
      const malformed = await call(method, path.replace('{tid}', 'not-a-uuid'), stranger, body);
      for (const answer of [intruding, missing, malformed])
        expect({ method, path, status: answer.status, body: answer.body }).toEqual({
          method,
          path,
          status: 404,
          body: { statusCode: 404, error: 'Not Found', message: 'team not found' },
        });
    }
    expect(await databaseFingerprint(db)).toEqual(before);
    expect(smtp.mails.length).toBe(mailsBefore);
    expect((await call('GET', '/teams', stranger)).body).toEqual({ teams: [] });
  });
});

/** A TCP server that takes connections and never says a word: an SMTP server that hangs. */
async function silentServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each([
  // Nothing listens on port 1: every mail fails at once with ECONNREFUSED.
  ['refuses connections', async () => ({ url: 'smtp://127.0.0.1:1', close: async () => {} })],
  // nodemailer alone would wait 30 s for its greeting; the service waits SMTP_TIMEOUTS_MS.greetingTimeout.
  ['takes connections and never answers', silentServer],
])('teams, when the mail server %s', (_, startMailServer) => {
  let sut: TestApp;
  let db: Client;
  let mailServer: Awaited<ReturnType<typeof startMailServer>>;

  beforeAll(async () => {
    mailServer = await startMailServer();
    sut = await startTestApp({ APP_ROLE: 'api', SMTP_URL: mailServer.url });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await sut?.close();
    await mailServer?.close();
  });

  it('answers 503 within the greeting time-out and keeps no invitation, nor drops the earlier one to the same address', async () => {
    const owner = await registerUser(sut.url);
    await db.query(`update users set plan = 'team' where id = $1`, [owner.id]);
    const team = await api(sut.url, 'POST', '/api/teams', {
      token: owner.accessToken,
      body: { name: 'Ops' },
    });
    const teamId = team.body.team.id as string;
    const email = uniqueEmail('unreachable');
    // An earlier invitation to the address, made while mail still went out (written as the API would).
    const earlier = await db.query(
      `insert into team_invitations (team_id, email, role, token_hash, invited_by, expires_at)
       values ($1, $2, 'viewer', 'earlier', $3, now() + interval '7 days') returning id`,
      [teamId, email, owner.id],
    );

    const started = Date.now();
    const answer = await api(sut.url, 'POST', `/api/teams/${teamId}/invitations`, {
      token: owner.accessToken,
      body: { email, role: 'member' },
    });
    expect(answer.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(SMTP_TIMEOUTS_MS.greetingTimeout + 5000);
    expect(answer.body.message).toContain('no invitation was made');
    const kept = await db.query('select id from team_invitations where team_id = $1', [teamId]);
    expect(kept.rows).toEqual([{ id: earlier.rows[0].id }]);
  });
});
