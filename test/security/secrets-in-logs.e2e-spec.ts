import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { api, uniqueEmail } from '../support/api-client';
import { FakeGemini } from '../support/fake-gemini';
import { answer, HttpsDestination } from '../support/https-destination';
import { spawnService, stopService } from '../support/service-process';
import { isolatedEnvironment, removeIsolated } from '../support/test-app';
import { capture, type EndpointFixture, hasStatus, waitForEvent } from '../support/webhook-fixtures';

const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

/**
 * A full flow against a service process at LOG_LEVEL=debug (request logs, delivery attempts, the
 * dead-letter alert written to the log without SMTP), then the whole of its stdout and stderr is searched
 * for every secret value it was given or gave out.
 */
describe('secrets never reach the logs', () => {
  it('logs requests (Authorization redacted) and never a password, token, signing secret or key, through a full flow', async () => {
    // a redirect is a failed attempt that carries an error, which the worker logs at debug level
    const sink = await HttpsDestination.start(answer(302, '', { location: 'https://example.com/' }));
    const gemini = await FakeGemini.start();
    const secrets = {
      password: secret('password'),
      wrongPassword: secret('wrong-password'),
      jwtSecret: secret('jwt-secret-of-at-least-32-characters'),
      geminiKey: secret('gemini-key'),
      destinationSecret: secret('whsec'),
      rotatedSecret: secret('whsec-rotated'),
      providerToken: secret('provider-bearer'),
    };
    const issued: string[] = [];
    const env = isolatedEnvironment({
      LOG_LEVEL: 'debug',
      JWT_SECRET: secrets.jwtSecret,
      GEMINI_API_KEY: secrets.geminiKey,
      GEMINI_BASE_URL: gemini.url,
      DELIVERY_RETRY_DELAYS_MS: '50,50,50,50',
    });
    const service = await spawnService(env);
    const base = `http://127.0.0.1:${service.port}`;
    try {
      const email = uniqueEmail('logs');
      const registered = await api(base, 'POST', '/api/auth/register', {
        body: { email, name: 'Logged', password: secrets.password },
      });
      const login = await api(base, 'POST', '/api/auth/login', {
        body: { email, password: secrets.password },
      });
      expect(
        (await api(base, 'POST', '/api/auth/login', { body: { email, password: secrets.wrongPassword } }))
          .status,
      ).toBe(401);
      const refreshed = await api(base, 'POST', '/api/auth/refresh', {
        body: { refreshToken: registered.body.refreshToken },
      });
      const token: string = refreshed.body.accessToken;
      issued.push(
        registered.body.accessToken,
        registered.body.refreshToken,
        login.body.accessToken,
        login.body.refreshToken,
        token,
      );
      expect((await api(base, 'GET', '/api/auth/me', { token })).status).toBe(200);
      const apiKey = await api(base, 'POST', '/api/api-keys', { token, body: { name: 'logged key' } });
      issued.push(apiKey.body.key);
      expect((await api(base, 'GET', '/api/endpoints', { token: apiKey.body.key })).status).toBe(200);

      const endpoint = await api(base, 'POST', '/api/endpoints', { token, body: { name: 'Audited' } });
      const fixture: EndpointFixture = {
        user: { id: registered.body.user.id, email, accessToken: token, refreshToken: '' },
        endpointId: endpoint.body.endpoint.id,
        captureUrl: `${base}/in/${endpoint.body.endpoint.public_token}`,
      };
      const destination = await api(base, 'POST', `/api/endpoints/${fixture.endpointId}/destinations`, {
        token,
        body: { url: `${sink.url}/hook`, secret: secrets.destinationSecret },
      });
      const eventId = await capture(fixture, '{"type":"invoice.paid"}', {
        headers: { authorization: `Bearer ${secrets.providerToken}` },
      });
      await waitForEvent(base, fixture, eventId, hasStatus('dead_letter'));

      sink.always(answer(200, 'ok'));
      await api(
        base,
        'PATCH',
        `/api/endpoints/${fixture.endpointId}/destinations/${destination.body.destination.id}`,
        {
          token,
          body: { secret: secrets.rotatedSecret },
        },
      );
      expect(
        (await api(base, 'POST', `/api/endpoints/${fixture.endpointId}/events/${eventId}/replay`, { token }))
          .status,
      ).toBe(200);
      await waitForEvent(base, fixture, eventId, hasStatus('delivered'));

      const db = new Client({ connectionString: env.DATABASE_URL });
      await db.connect();
      await db.query(`update users set plan = 'team' where email = $1`, [email]);
      await db.end();
      gemini.answerWith({ text: 'A Stripe invoice was paid.' });
      expect(
        (
          await api(base, 'GET', `/api/endpoints/${fixture.endpointId}/events/${eventId}/ai/explain`, {
            token,
          })
        ).status,
      ).toBe(200);
      await api(base, 'POST', '/api/auth/logout', { token, body: { refreshToken: login.body.refreshToken } });

      await new Promise((resolve) => setTimeout(resolve, 500));
      const output = service.output();
      // the flow was logged, at debug level too, with Authorization redacted (booleans: the output is long)
      const logged = (text: string) => output.includes(text);
      expect({
        requests: logged('"url":"/api/auth/me"'),
        redacted: logged('"authorization":"[redacted]"'),
        debug: logged('"level":20') && logged('attempt failed'),
        alert: logged('SMTP_URL is not set: alert logged'),
      }).toEqual({ requests: true, redacted: true, debug: true, alert: true });
      expect(sink.received.length).toBeGreaterThanOrEqual(6);
      expect(gemini.requests).toHaveLength(1);
      const leaked = Object.entries({
        ...secrets,
        ...Object.fromEntries(issued.map((value, n) => [`issued token ${n}`, value])),
      })
        .filter(([, value]) => output.includes(value))
        .map(([name]) => name);
      expect(leaked).toEqual([]);
    } finally {
      await stopService(service);
      await removeIsolated(env);
      await sink.close();
      await gemini.close();
    }
  });
});
