import { Client } from 'pg';
import { api, createApiKey, registerUser } from '../support/api-client';
import { hmacJwt, rs256Jwt, unsignedJwt } from '../support/jwt';
import { fillPath, loadOpenApi, type Operation, operationsOf, validBody } from '../support/openapi-document';
import { startTestApp, type TestApp } from '../support/test-app';
import { createTenant, pathRecipes, type Tenant } from '../support/tenant-fixture';

/**
 * Access and refresh tokens. The access tokens are forged here with the server's real secret (read from
 * the database, where it keeps the one it made), so that each forged token differs from a valid one in
 * exactly one way; the valid one is shown to work first.
 */
describe('tokens', () => {
  let sut: TestApp;
  let db: Client;
  let secret: string;
  let tenant: Tenant;
  let protectedOperations: Operation[];
  let revokedKey: string;
  let expiredKey: string;

  const createKey = () => createApiKey(sut.url, tenant.user, { name: 'forged' });

  const now = () => Math.floor(Date.now() / 1000);
  const claims = () => ({
    sub: tenant.user.id,
    email: tenant.user.email,
    plan: 'team',
    typ: 'access',
    iat: now(),
    exp: now() + 60,
  });
  const hs256 = (payload: Record<string, unknown>, key = secret) =>
    hmacJwt({ alg: 'HS256', typ: 'JWT' }, payload, key);

  beforeAll(async () => {
    sut = await startTestApp({ APP_ROLE: 'api' });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    tenant = await createTenant(sut.url, db, 'tokens');
    secret = (await db.query(`select value from app_settings where key = 'jwt_secret'`)).rows[0].value;
    const revoked = await createKey();
    await api(sut.url, 'DELETE', `/api/api-keys/${revoked.api_key.id}`, { token: tenant.user.accessToken });
    revokedKey = revoked.key;
    const expired = await createKey();
    await db.query(`update api_keys set expires_at = now() - interval '1 second' where id = $1`, [
      expired.api_key.id,
    ]);
    expiredKey = expired.key;
    protectedOperations = operationsOf(await loadOpenApi(sut.url)).filter(
      (operation) => operation.isProtected,
    );
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
  });

  it('accepts an access token forged with the real secret and the real claims (the control)', async () => {
    const me = await api(sut.url, 'GET', '/api/auth/me', { token: hs256(claims()) });
    expect(me).toMatchObject({ status: 200, body: { user: { id: tenant.user.id } } });
  });

  const hostileAccessTokens: [string, () => string | undefined][] = [
    ['no token', () => undefined],
    ['not a JWT', () => 'not.a.jwt'],
    ['an empty bearer', () => ''],
    ['expired', () => hs256({ ...claims(), iat: now() - 1000, exp: now() - 100 })],
    ['not valid yet (nbf in the future)', () => hs256({ ...claims(), nbf: now() + 600 })],
    ['signed with another secret', () => hs256(claims(), 'another secret of at least thirty-two chars')],
    ['signed with an empty secret', () => hs256(claims(), '')],
    ['HS512 with the real secret', () => hmacJwt({ alg: 'HS512', typ: 'JWT' }, claims(), secret, 'sha512')],
    ['HS384 with the real secret', () => hmacJwt({ alg: 'HS384', typ: 'JWT' }, claims(), secret, 'sha384')],
    ['RS256 with a key of its own', () => rs256Jwt(claims())],
    ['alg none', () => unsignedJwt(claims())],
    ['alg none with a signature kept', () => `${unsignedJwt(claims())}${hs256(claims()).split('.')[2]}`],
    [
      'a valid signature over other claims',
      () => {
        const [header, , signature] = hs256(claims()).split('.');
        const other = Buffer.from(JSON.stringify({ ...claims(), sub: tenant.endpointId })).toString(
          'base64url',
        );
        return `${header}.${other}.${signature}`;
      },
    ],
    ['a token of another type (typ refresh)', () => hs256({ ...claims(), typ: 'refresh' })],
    ['a token without typ', () => hs256({ ...claims(), typ: undefined })],
    ['a token without sub', () => hs256({ ...claims(), sub: undefined })],
    ['a refresh token', () => tenant.user.refreshToken],
    ['an unknown API key', () => `htk_${'x'.repeat(43)}`],
    ['a revoked API key', () => revokedKey],
    ['an expired API key', () => expiredKey],
  ];

  it.each(hostileAccessTokens)(
    'answers 401 on every protected route of the OpenAPI document to %s',
    async (_label, token) => {
      expect(protectedOperations.length).toBeGreaterThanOrEqual(20);
      const problems: string[] = [];
      for (const operation of protectedOperations) {
        const value = token();
        const response = await fetch(`${sut.url}${fillPath(operation.path, pathRecipes(tenant))}`, {
          method: operation.method,
          headers: {
            ...(value === undefined ? {} : { authorization: `Bearer ${value}` }),
            ...(operation.body ? { 'content-type': 'application/json' } : {}),
          },
          body: operation.body && JSON.stringify(validBody(operation.body)),
        });
        const body = (await response.json()) as Record<string, unknown>;
        if (response.status !== 401 || body.error !== 'Unauthorized')
          problems.push(`${operation.label}: ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
      }
      expect(problems).toEqual([]);
    },
  );

  it('takes the access token only from the Authorization header, not from the query string or a cookie', async () => {
    const token = hs256(claims());
    for (const headers of [{}, { cookie: `access_token=${token}; Authorization=Bearer ${token}` }] as Record<
      string,
      string
    >[]) {
      const response = await fetch(`${sut.url}/api/auth/me?access_token=${token}`, { headers });
      expect(response.status).toBe(401);
    }
  });

  describe('refresh tokens', () => {
    const refresh = (refreshToken: string) =>
      api(sut.url, 'POST', '/api/auth/refresh', { body: { refreshToken } });

    it('answers 401 to an unknown, an expired and a revoked (logged out) refresh token, and to an access token', async () => {
      expect((await refresh('x'.repeat(43))).status).toBe(401);

      const expired = await registerUser(sut.url);
      await db.query(
        `update refresh_tokens set expires_at = now() - interval '1 second' where user_id = $1`,
        [expired.id],
      );
      expect((await refresh(expired.refreshToken)).status).toBe(401);

      const revoked = await registerUser(sut.url);
      expect((await refresh(revoked.refreshToken)).status).toBe(200);
      const logout = await api(sut.url, 'POST', '/api/auth/logout', {
        token: revoked.accessToken,
        body: { refreshToken: revoked.refreshToken },
      });
      expect(logout).toMatchObject({ status: 200, body: { ok: true } });
      expect(await refresh(revoked.refreshToken)).toMatchObject({
        status: 401,
        body: { statusCode: 401, error: 'Unauthorized' },
      });

      // an access token is longer than any refresh token: refused by validation (400) or as unknown (401)
      expect([400, 401]).toContain((await refresh(revoked.accessToken)).status);
    });

    it("does not let one user log out another user's refresh token", async () => {
      const victim = await registerUser(sut.url);
      const intruder = await registerUser(sut.url);
      await api(sut.url, 'POST', '/api/auth/logout', {
        token: intruder.accessToken,
        body: { refreshToken: victim.refreshToken },
      });
      expect((await refresh(victim.refreshToken)).status).toBe(200);
    });
  });
});
