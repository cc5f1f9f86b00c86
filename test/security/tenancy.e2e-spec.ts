import { Client } from 'pg';
import { callOperation as call } from '../support/openapi-call';
import {
  fillPath,
  loadOpenApi,
  type Operation,
  operationsOf,
  pathParameterNames,
} from '../support/openapi-document';
import { startTestApp, type TestApp } from '../support/test-app';
import { createTenant, databaseFingerprint, pathRecipes, type Tenant } from '../support/tenant-fixture';

const MISSING_ID = '00000000-0000-4000-8000-000000000000';

/** Every way to mix the owner's and the intruder's ids: each non-empty set of parameters taken from the owner. */
function mixes(names: string[], owner: Record<string, string>, own: Record<string, string>) {
  return Array.from({ length: 2 ** names.length - 1 }, (_, index) => {
    const fromOwner = names.filter((_name, bit) => ((index + 1) >> bit) & 1);
    const values = Object.fromEntries(
      names.map((name) => [name, fromOwner.includes(name) ? owner[name] : own[name]]),
    );
    const missing = Object.fromEntries(
      names.map((name) => [name, fromOwner.includes(name) ? MISSING_ID : own[name]]),
    );
    return { fromOwner, values, missing };
  });
}

/**
 * Tenancy, generated from the OpenAPI document, so that a route added without an ownership check fails
 * here without anyone listing it: every route that takes an id is called by another user with Alice's
 * ids (alone and mixed with the caller's own) and must answer 404 exactly like an id that does not exist;
 * every GET route called by Bob must show nothing of Alice's.
 */
describe('tenancy (generated from the OpenAPI document)', () => {
  let sut: TestApp;
  let db: Client;
  let operations: Operation[];
  let alice: Tenant;
  let mallory: Tenant;
  let bob: Tenant;

  beforeAll(async () => {
    sut = await startTestApp({ APP_ROLE: 'api' });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    [alice, mallory, bob] = [
      await createTenant(sut.url, db, 'alice'),
      await createTenant(sut.url, db, 'mallory'),
      await createTenant(sut.url, db, 'bob'),
    ];
    operations = operationsOf(await loadOpenApi(sut.url));
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
  });

  it("answers 404 to every route that takes an id, for another user's ids, exactly like for missing ids, and changes nothing", async () => {
    const withIds = operations.filter((operation) => pathParameterNames(operation.path).length > 0);
    expect(withIds.length).toBeGreaterThanOrEqual(15);
    const owner = pathRecipes(alice);
    const own = pathRecipes(mallory);
    const before = await databaseFingerprint(db);
    const problems: string[] = [];
    for (const operation of withIds) {
      const names = pathParameterNames(operation.path);
      const unknown = names.filter((name) => owner[name] === undefined);
      if (unknown.length > 0) {
        problems.push(
          `${operation.label}: no recipe for {${unknown.join('}, {')}} in pathRecipes(): add one`,
        );
        continue;
      }
      if (!operation.isProtected) problems.push(`${operation.label}: takes an id but needs no token`);
      for (const { fromOwner, values, missing } of mixes(names, owner, own)) {
        const token = mallory.user.accessToken;
        const intruding = await call(sut.url, operation, fillPath(operation.path, values), token);
        const absent = await call(sut.url, operation, fillPath(operation.path, missing), token);
        const where = `${operation.label} with Alice's {${fromOwner.join('}, {')}}`;
        if (intruding.status !== 404)
          problems.push(`${where}: ${intruding.status} ${intruding.text.slice(0, 200)}`);
        else if (intruding.text !== absent.text)
          problems.push(`${where}: answers ${intruding.text}, but a missing id answers ${absent.text}`);
      }
    }
    expect(problems).toEqual([]);
    expect(await databaseFingerprint(db)).toEqual(before);
  });

  it("never shows Alice's data on any GET route called by Bob, with every filter", async () => {
    const reads = operations.filter((operation) => operation.method === 'GET');
    const leaks: string[] = [];
    const shownToAlice = new Set<string>();
    const aliceStrings = [
      alice.user.id,
      alice.user.email,
      alice.endpointId,
      alice.publicToken,
      alice.eventId,
      alice.destinationId,
      ...Object.values(alice.secrets),
    ];
    const shows = (text: string) => aliceStrings.filter((value) => text.includes(value));
    for (const operation of reads) {
      const filters = [''];
      const searches: string[] = [];
      for (const parameter of operation.parameters.filter((candidate) => candidate.in === 'query')) {
        const { name, schema = {} } = parameter;
        if (schema.enum) filters.push(...schema.enum.map((member) => `?${name}=${String(member)}`));
        else if (schema.type === 'string' && schema.example === undefined)
          searches.push(`?${name}=${encodeURIComponent(alice.secrets.eventMarker)}`);
      }
      for (const query of [...filters, ...searches]) {
        const path = `${fillPath(operation.path, pathRecipes(bob))}${query}`;
        const seen = await call(sut.url, operation, path, bob.user.accessToken, {
          streamMs: 300,
          during: () =>
            fetch(`${sut.url}/in/${alice.publicToken}`, { method: 'POST', body: alice.secrets.eventMarker }),
        });
        const where = `${operation.label}${query} (${seen.status})`;
        if (shows(seen.text).length > 0) leaks.push(`${where} shows ${shows(seen.text).join(', ')}`);
        if (searches.includes(query) && /"total":[1-9]/.test(seen.text))
          leaks.push(`${where} counts Alice's events`);
      }
      const own = await call(
        sut.url,
        operation,
        fillPath(operation.path, pathRecipes(alice)),
        alice.user.accessToken,
      );
      if (shows(own.text).length > 0) shownToAlice.add(operation.label);
    }
    expect(leaks).toEqual([]);
    // the same calls do show Alice her own data, so the strings searched for are the ones these routes return
    expect([...shownToAlice]).toEqual(
      expect.arrayContaining([
        'GET /api/auth/me',
        'GET /api/endpoints',
        'GET /api/endpoints/{id}',
        'GET /api/endpoints/{id}/destinations',
        'GET /api/endpoints/{id}/events',
        'GET /api/endpoints/{id}/events/{eId}',
      ]),
    );
  });
});
