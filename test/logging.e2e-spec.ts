import { api, uniqueEmail } from './support/api-client';
import { spawnService, stopService } from './support/service-process';
import { dropDatabase, isolatedEnvironment } from './support/test-app';

describe('request logs', () => {
  it('log each request, and never the Authorization header, tokens or passwords', async () => {
    const env = isolatedEnvironment({ LOG_LEVEL: 'info' });
    const service = await spawnService(env);
    const base = `http://127.0.0.1:${service.port}`;
    const password = 'a very secret password 42';
    try {
      const registered = await api(base, 'POST', '/api/auth/register', {
        body: { email: uniqueEmail(), name: 'Logged', password },
      });
      const { accessToken, refreshToken } = registered.body;
      const login = await api(base, 'POST', '/api/auth/login', {
        body: { email: registered.body.user.email, password },
      });
      const refreshed = await api(base, 'POST', '/api/auth/refresh', { body: { refreshToken } });
      await api(base, 'GET', '/api/auth/me', { token: accessToken });
      await api(base, 'POST', '/api/auth/logout', {
        token: login.body.accessToken,
        body: { refreshToken: login.body.refreshToken },
      });

      await new Promise((resolve) => setTimeout(resolve, 500));
      const output = service.output();
      expect(output).toContain('"url":"/api/auth/me"');
      expect(output).toContain('"authorization":"[redacted]"');
      for (const secret of [
        password,
        accessToken,
        refreshToken,
        login.body.accessToken,
        login.body.refreshToken,
        refreshed.body.accessToken,
      ]) {
        expect(output).not.toContain(secret);
      }
    } finally {
      await stopService(service);
      await dropDatabase(env.DATABASE_URL);
    }
  });
});
