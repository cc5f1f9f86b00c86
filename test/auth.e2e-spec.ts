import { Client } from 'pg';
import { api, registerUser, uniqueEmail } from './support/api-client';
import { decodeJwt } from './support/jwt';
import { startTestApp, type TestApp } from './support/test-app';

const PASSWORD = 'correct horse battery';

describe('authentication', () => {
  let sut: TestApp;
  let database: Client;

  beforeAll(async () => {
    sut = await startTestApp();
    database = new Client({ connectionString: sut.env.DATABASE_URL });
    await database.connect();
  });
  afterAll(async () => {
    await database.end();
    await sut.close();
  });

  describe('register', () => {
    it('creates a free user and returns the session, never the password or its hash', async () => {
      const email = uniqueEmail();
      const response = await api(sut.url, 'POST', '/api/auth/register', {
        body: { email, name: 'Ada', password: PASSWORD },
      });
      expect(response.status).toBe(201);
      expect(Object.keys(response.body).sort()).toEqual(['accessToken', 'refreshToken', 'user']);
      expect(response.body.user).toEqual({ id: expect.any(String), email, name: 'Ada', plan: 'free' });
      expect(JSON.stringify(response.body)).not.toMatch(/argon2|password/i);
      const stored = await database.query('select password_hash from users where email = $1', [email]);
      expect(stored.rows[0].password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    });

    it('trims the email, compares it case-insensitively, and answers 409 when it is taken', async () => {
      const email = uniqueEmail();
      const first = await api(sut.url, 'POST', '/api/auth/register', {
        body: { email: `  ${email.toUpperCase()} `, name: 'A', password: PASSWORD },
      });
      expect(first.body.user.email).toBe(email);
      for (const again of [email, email.toUpperCase(), ` ${email} `]) {
        const duplicate = await api(sut.url, 'POST', '/api/auth/register', {
          body: { email: again, name: 'B', password: PASSWORD },
        });
        expect(duplicate).toMatchObject({
          status: 409,
          body: { statusCode: 409, message: 'email is already registered' },
        });
      }
    });

    it.each([
      ['password of 7 characters', { password: 'x'.repeat(7) }, 'password'],
      ['password of 129 characters', { password: 'x'.repeat(129) }, 'password'],
      ['empty name', { name: '' }, 'name'],
      [
        'name of spaces',
        { name: '   ' },
        'name must be 1 to 100 characters, not counting spaces at either end',
      ],
      ['name of 101 characters', { name: 'n'.repeat(101) }, 'name'],
      ['invalid email', { email: 'not-an-email' }, 'email'],
      ['missing email', { email: undefined }, 'email'],
      ['any other field', { plan: 'team' }, 'plan'],
    ])('answers 400 naming the field for a %s', async (_label, change, field) => {
      const body = { email: uniqueEmail(), name: 'Ada', password: PASSWORD, ...change };
      const response = await api(sut.url, 'POST', '/api/auth/register', { body });
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body.message)).toContain(field);
    });

    it('accepts a password of exactly 8 and 128 characters and a name of 100', async () => {
      for (const [password, name] of [
        ['x'.repeat(8), 'n'],
        ['x'.repeat(128), 'n'.repeat(100)],
      ]) {
        const response = await api(sut.url, 'POST', '/api/auth/register', {
          body: { email: uniqueEmail(), name, password },
        });
        expect(response.status).toBe(201);
      }
    });
  });

  describe('login', () => {
    it('answers 200 with the same shape as register', async () => {
      const user = await registerUser(sut.url);
      const response = await api(sut.url, 'POST', '/api/auth/login', {
        body: { email: user.email.toUpperCase(), password: PASSWORD },
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        user: { id: user.id, email: user.email, name: 'Test User', plan: 'free' },
        accessToken: expect.any(String),
        refreshToken: expect.any(String),
      });
    });

    it('answers the same 401 for an unknown email and a wrong password', async () => {
      const user = await registerUser(sut.url);
      const unknown = await api(sut.url, 'POST', '/api/auth/login', {
        body: { email: uniqueEmail(), password: PASSWORD },
      });
      const wrong = await api(sut.url, 'POST', '/api/auth/login', {
        body: { email: user.email, password: 'wrong password' },
      });
      expect(unknown.status).toBe(401);
      expect(wrong.status).toBe(401);
      expect(unknown.body).toEqual(wrong.body);
    });
  });

  describe('tokens', () => {
    it('issues an HS256 access token valid 900 s and an opaque 256-bit refresh token kept only as a hash, for 30 days', async () => {
      const user = await registerUser(sut.url);
      const { header, payload } = decodeJwt(user.accessToken);
      expect(header.alg).toBe('HS256');
      expect(Number(payload.exp) - Number(payload.iat)).toBe(900);
      expect(payload.sub).toBe(user.id);
      expect(user.refreshToken).toMatch(/^[A-Za-z0-9_-]{43,}$/);
      const rows = await database.query(`select * from refresh_tokens where user_id = $1`, [user.id]);
      expect(JSON.stringify(rows.rows)).not.toContain(user.refreshToken);
      const lifetime = new Date(rows.rows[0].expires_at).getTime() - Date.now();
      expect(Math.abs(lifetime - 30 * 24 * 3600 * 1000)).toBeLessThan(60_000);
    });

    it('refreshes to exactly {accessToken}, which works', async () => {
      const user = await registerUser(sut.url);
      const response = await api(sut.url, 'POST', '/api/auth/refresh', {
        body: { refreshToken: user.refreshToken },
      });
      expect(response.status).toBe(200);
      expect(Object.keys(response.body)).toEqual(['accessToken']);
      const me = await api(sut.url, 'GET', '/api/auth/me', { token: response.body.accessToken });
      expect(me).toMatchObject({ status: 200, body: { user: { id: user.id, email: user.email } } });
    });
  });
});

describe('authentication rate limit', () => {
  let sut: TestApp;
  beforeAll(async () => {
    sut = await startTestApp({ AUTH_RATE_LIMIT_PER_MIN: '10' });
  });
  afterAll(() => sut.close());

  it.each(['register', 'login', 'refresh'])(
    'answers the 11th %s attempt from one IP in a minute with 429 and Retry-After',
    async (route) => {
      const body =
        route === 'refresh'
          ? { refreshToken: 'x'.repeat(43) }
          : { email: uniqueEmail(), name: 'A', password: 'short' };
      const statuses = [];
      for (let attempt = 1; attempt <= 10; attempt++)
        statuses.push((await api(sut.url, 'POST', `/api/auth/${route}`, { body })).status);
      expect(statuses).not.toContain(429);
      const eleventh = await api(sut.url, 'POST', `/api/auth/${route}`, { body });
      expect(eleventh.status).toBe(429);
      expect(Number(eleventh.headers.get('retry-after'))).toBeGreaterThan(0);
    },
  );
});
