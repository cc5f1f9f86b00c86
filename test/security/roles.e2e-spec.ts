import { Client } from 'pg';
import { registerUser, type RegisteredUser } from '../support/api-client';
import { callOperation } from '../support/openapi-call';
import {
  fillPath,
  loadOpenApi,
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
    operations = operationsOf(await loadOpenApi(sut.url)).filter(
      (operation) => pathParameterNames(operation.path).length > 0,
    );
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
