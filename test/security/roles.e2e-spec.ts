import { Client } from 'pg';
import { api, createApiKey, registerUser, type RegisteredUser } from '../support/api-client';
import { callOperation } from '../support/openapi-call';
import {
  fillPath,
  holdsProperty,
  loadOpenApi,
  type OpenApiDocument,
  type Operation,
  operationsOf,
  pathParameterNames,
  validBody,
} from '../support/openapi-document';
import { startTestApp, type TestApp } from '../support/test-app';
import {
  addTeamMember,
  createTenant,
  databaseFingerprint,
  pathRecipes,
  type Tenant,
} from '../support/tenant-fixture';

const ROLES = ['viewer', 'member', 'admin', 'owner'];
/** The resources a team shares; the others (API keys, notification channels) are their owner's alone. */
const TEAM_RESOURCES = new Set(['endpoint', 'issue', 'team']);

/**
 * Anyone in a team may remove themselves (leave), so the route lets viewers in; removing someone else (the
 * walk's `uid` is another member) needs an admin, which the service checks.
 */
const REMOVE_MEMBER = 'DELETE /api/teams/{tid}/members/{uid}';

type Caller = 'stranger' | 'viewer' | 'member';

/** What the route must answer the caller: refused with 404 or 403, or let through. */
function expected(operation: Operation, caller: Caller): 404 | 403 | 'allowed' {
  const access = operation.access!;
  if (caller === 'stranger' || !TEAM_RESOURCES.has(access.resource)) return 404;
  if (operation.label === REMOVE_MEMBER) return 403;
  return ROLES.indexOf(caller) >= ROLES.indexOf(access.role) ? 'allowed' : 403;
}

/** Every object of an answer that says whether it has a secret (`secret_set`): destinations and channels. */
function secretHolders(value: unknown): { secret: unknown; secret_set: unknown }[] {
  if (Array.isArray(value)) return value.flatMap(secretHolders);
  if (typeof value !== 'object' || value === null) return [];
  const own = 'secret_set' in value ? [value as { secret: unknown; secret_set: unknown }] : [];
  return [...own, ...Object.values(value).flatMap(secretHolders)];
}

/** DELETEs last, the ones of deeper paths first, so that a call let through takes nothing from the next. */
function destructiveLast(a: Operation, b: Operation): number {
  const rank = (operation: Operation) =>
    operation.method === 'DELETE' ? 1_000 - operation.path.split('/').length : 0;
  return rank(a) - rank(b);
}

/**
 * Roles, generated from the OpenAPI document: every route that names a resource declares the permission
 * it needs (`x-access`, from @Can), and is called on a team's resources by a stranger (404, as for a
 * missing id), a viewer and a member (403 below the route's role, let through at or above it). A route
 * that takes an id without declaring its access fails here.
 */
describe('roles (generated from the OpenAPI document)', () => {
  let sut: TestApp;
  let db: Client;
  let document: OpenApiDocument;
  let operations: Operation[];
  let team: Tenant;
  let callers: Record<Caller, RegisteredUser>;

  beforeAll(async () => {
    sut = await startTestApp({ APP_ROLE: 'api' });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    team = await createTenant(sut.url, db, 'team', { endpointInTeam: true });
    callers = {
      stranger: await registerUser(sut.url),
      viewer: await registerUser(sut.url),
      member: await registerUser(sut.url),
    };
    await addTeamMember(db, team.teamId, callers.viewer.id, 'viewer');
    await addTeamMember(db, team.teamId, callers.member.id, 'member');
    document = await loadOpenApi(sut.url);
    operations = operationsOf(document).filter((operation) => pathParameterNames(operation.path).length > 0);
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
  });

  const call = (operation: Operation, caller: Caller) => {
    // Moving the endpoint out of its team is a permission of its own (team.manage), tested in team-endpoints.
    const body = operation.body && validBody(operation.body);
    if (body) delete body.team_id;
    return callOperation(
      sut.url,
      operation,
      fillPath(operation.path, pathRecipes(team)),
      callers[caller].accessToken,
      { body, streamMs: 100 },
    );
  };

  it('has every route that takes an id declare the permission it needs', () => {
    expect(operations.length).toBeGreaterThanOrEqual(25);
    expect(operations.filter((operation) => !operation.access).map((operation) => operation.label)).toEqual(
      [],
    );
    // reads are open to viewers, writes to members or above
    const misjudged = operations.filter(
      (operation) =>
        TEAM_RESOURCES.has(operation.access!.resource) &&
        (operation.method === 'GET') !== (operation.access!.role === 'viewer'),
    );
    expect(misjudged.map((operation) => `${operation.label}: ${operation.access!.role}`).sort()).toEqual([
      `${REMOVE_MEMBER}: viewer`,
      // who is invited, and by which address, is for those who may invite
      'GET /api/teams/{tid}/invitations: admin',
      // these two compute an answer from the event and change nothing
      'POST /api/endpoints/{id}/events/{eId}/ai/handler: viewer',
      'POST /api/endpoints/{id}/events/{eId}/filter-test: viewer',
    ]);
  });

  it("refuses a stranger (404) and a role below the route's (403), and changes nothing", async () => {
    const before = await databaseFingerprint(db);
    const problems: string[] = [];
    for (const operation of operations)
      for (const caller of ['stranger', 'viewer', 'member'] as const) {
        const want = expected(operation, caller);
        if (want === 'allowed') continue;
        const answer = await call(operation, caller);
        if (answer.status !== want)
          problems.push(
            `${operation.label} as ${caller}: ${answer.status} ${answer.text.slice(0, 160)}, not ${want}`,
          );
      }
    expect(problems).toEqual([]);
    expect(await databaseFingerprint(db)).toEqual(before);
  });

  /**
   * Secrets by role, generated too: every route whose answer holds a destination or a notification channel
   * (a schema with `secret_set`) is called by each kind of caller. Before the DELETEs of the next test.
   */
  it('shows secrets only to those who may write them, on every route that answers one', async () => {
    const secretRoutes = operationsOf(document).filter((operation) =>
      holdsProperty(document, operation.response, 'secret_set'),
    );
    expect(secretRoutes.map((operation) => operation.label).sort()).toEqual([
      'GET /api/endpoints/{id}',
      'GET /api/endpoints/{id}/destinations',
      'GET /api/endpoints/{id}/destinations/{dId}',
      'GET /api/notification-channels',
      'GET /api/notification-channels/{cid}',
      'PATCH /api/endpoints/{id}/destinations/{dId}',
      'POST /api/endpoints/{id}/destinations',
      'POST /api/notification-channels',
    ]);
    const owner = team.user;
    const admin = await registerUser(sut.url);
    await addTeamMember(db, team.teamId, admin.id, 'admin');
    const readKey = (await createApiKey(sut.url, owner, { name: 'read', scope: 'read' })).key;
    const writeKey = (await createApiKey(sut.url, owner, { name: 'write', scope: 'write' })).key;
    // The owner's own (personal) endpoint, with a signed destination: its secret is theirs as before.
    const personal = await api(sut.url, 'POST', '/api/endpoints', {
      token: owner.accessToken,
      body: { name: 'personal' },
    });
    const personalSecret = 'whsec_personal_endpoint_secret';
    const personalDestination = await api(
      sut.url,
      'POST',
      `/api/endpoints/${personal.body.endpoint.id}/destinations`,
      {
        token: owner.accessToken,
        body: { url: 'https://personal.example.com/hook', secret: personalSecret },
      },
    );
    const teamPath = pathRecipes(team);
    const personalPath = {
      ...teamPath,
      id: personal.body.endpoint.id,
      dId: personalDestination.body.destination.id,
    };
    type Shown = 'shown' | 'hidden';
    const cases: { who: string; token: string; path: Record<string, string>; secret: string; want: Shown }[] =
      [
        { who: 'viewer', token: callers.viewer.accessToken, path: teamPath, want: 'hidden' },
        { who: 'member', token: callers.member.accessToken, path: teamPath, want: 'shown' },
        { who: 'admin', token: admin.accessToken, path: teamPath, want: 'shown' },
        { who: 'owner', token: owner.accessToken, path: teamPath, want: 'shown' },
        { who: "the owner's read key", token: readKey, path: teamPath, want: 'hidden' },
        { who: "the owner's write key", token: writeKey, path: teamPath, want: 'shown' },
        { who: 'owner (personal)', token: owner.accessToken, path: personalPath, want: 'shown' },
        { who: 'read key (personal)', token: readKey, path: personalPath, want: 'hidden' },
        { who: 'write key (personal)', token: writeKey, path: personalPath, want: 'shown' },
      ].map((entry) => ({
        ...entry,
        want: entry.want as Shown,
        secret: entry.path === teamPath ? team.secrets.destinationSecret : personalSecret,
      }));
    // Channels are their owner's alone: only the owner's session and keys reach the tenant's.
    const reachesChannels = (token: string) => [owner.accessToken, readKey, writeKey].includes(token);

    const problems: string[] = [];
    const seen = new Set<string>();
    for (const { who, token, path, secret, want } of cases)
      for (const operation of secretRoutes) {
        const isChannel = operation.path.startsWith('/api/notification-channels');
        if (isChannel && (!reachesChannels(token) || path === personalPath)) continue;
        const writes = operation.method !== 'GET';
        const sentSecret = `whsec_sent_by_${who.replace(/\W/g, '_')}`;
        const body = operation.label.startsWith('POST /api/endpoints')
          ? { url: 'https://another.example.com/hook', secret: sentSecret }
          : operation.method === 'PATCH'
            ? { is_active: true }
            : isChannel
              ? { type: 'webhook', target: 'https://notify.example.com/hook', events: ['dead_letter'] }
              : undefined;
        const answer = await callOperation(sut.url, operation, fillPath(operation.path, path), token, {
          body,
        });
        const label = `${operation.label} as ${who}`;
        if (writes && want === 'hidden') {
          // A viewer and a read-only key may not write: refused, with no secret in the refusal.
          if (answer.status !== 403 || answer.text.includes(secret))
            problems.push(`${label}: ${answer.status}`);
          continue;
        }
        const holders = secretHolders(JSON.parse(answer.text));
        if (answer.status >= 300 || holders.length === 0) {
          problems.push(`${label}: ${answer.status} ${answer.text.slice(0, 160)}`);
          continue;
        }
        seen.add(`${operation.label} ${want}`);
        const expected = isChannel
          ? // a webhook channel's secret is in its creation answer only, for every caller
            holders.map(() => ({
              secret: operation.method === 'POST' ? expect.stringMatching(/^whsec_/) : null,
              secret_set: true,
            }))
          : want === 'hidden'
            ? holders.map(() => ({ secret: null, secret_set: true }))
            : holders.map(() => ({
                secret: operation.method === 'POST' ? sentSecret : expect.stringMatching(/^whsec_/),
                secret_set: true,
              }));
        try {
          expect(holders.map(({ secret: shown, secret_set }) => ({ secret: shown, secret_set }))).toEqual(
            expected,
          );
          if (!isChannel && want === 'shown' && operation.method !== 'POST')
            expect(holders.map((holder) => holder.secret)).toContain(secret);
          if (want === 'hidden') expect(answer.text).not.toContain(secret);
        } catch (error) {
          problems.push(`${label}: ${(error as Error).message.split('\n').slice(0, 12).join(' ')}`);
        }
      }
    expect(problems).toEqual([]);
    // every route was seen answering both ways (the creations: by writers only)
    expect([...seen].sort()).toEqual(
      secretRoutes
        .flatMap((operation) =>
          operation.method === 'GET'
            ? ['hidden', 'shown'].map((want) => `${operation.label} ${want}`)
            : [`${operation.label} shown`],
        )
        .sort(),
    );
  });

  it('lets a viewer and a member through every route their role reaches', async () => {
    const problems: string[] = [];
    for (const operation of [...operations].sort(destructiveLast))
      for (const caller of ['viewer', 'member'] as const) {
        if (expected(operation, caller) !== 'allowed') continue;
        const answer = await call(operation, caller);
        if ([401, 403, 404].includes(answer.status) || answer.status >= 500)
          problems.push(`${operation.label} as ${caller}: ${answer.status} ${answer.text.slice(0, 160)}`);
      }
    expect(problems).toEqual([]);
  });
});
