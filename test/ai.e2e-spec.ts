import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import * as ts from 'typescript';
import { LOCAL_AI_TIMEOUT_MS } from '../src/ai/local/local-ai.pool';
import { api } from './support/api-client';
import { FakeGemini } from './support/fake-gemini';
import { answer, HttpsDestination } from './support/https-destination';
import { freePort } from './support/service-process';
import { startTestApp, type TestApp } from './support/test-app';
import {
  addDestination,
  capture,
  createEndpoint,
  type EndpointFixture,
  hasStatus,
  waitForEvent,
} from './support/webhook-fixtures';

const STRIPE_BODY = JSON.stringify({
  id: 'evt_1',
  object: 'event',
  type: 'invoice.paid',
  data: {
    object: {
      id: 'in_1',
      object: 'invoice',
      amount_paid: 2000,
      currency: 'usd',
      customer: 'cus_123',
      lines: [{ id: 'l1' }, { id: 'l2', note: null }],
    },
  },
});
const STRIPE_HEADERS = {
  'stripe-signature': 't=1,v1=provider-signature-value',
  authorization: 'Bearer secret-bearer-value',
};

async function setPlan(sut: TestApp, email: string, plan: string): Promise<void> {
  const database = new Client({ connectionString: sut.env.DATABASE_URL });
  await database.connect();
  await database.query('update users set plan = $1 where email = $2', [plan, email]);
  await database.end();
}

const URL_USER = 'ops';
const URL_PASSWORD = 'url-password-value';
/** The destination URL with user information: its password is sent as Basic credentials. */
function withUrlPassword(url: string): string {
  const withCredentials = new URL(url);
  withCredentials.username = URL_USER;
  withCredentials.password = URL_PASSWORD;
  return withCredentials.toString();
}

const route = (fixture: EndpointFixture, eventId: string, operation: string) =>
  `/api/endpoints/${fixture.endpointId}/events/${eventId}/ai/${operation}`;

describe('AI analysis (local engine)', () => {
  let sut: TestApp;
  let fixture: EndpointFixture;
  let eventId: string;

  beforeAll(async () => {
    sut = await startTestApp();
    fixture = await createEndpoint(sut.url);
    eventId = await capture(fixture, STRIPE_BODY, { headers: STRIPE_HEADERS });
  });
  afterAll(() => sut.close());

  it('answers 403 with upgrade_required on all four routes for a free account', async () => {
    for (const [method, operation] of [
      ['GET', 'explain'],
      ['GET', 'schema'],
      ['POST', 'handler'],
      ['GET', 'diagnose'],
    ]) {
      const response = await api(sut.url, method, route(fixture, eventId, operation), {
        token: fixture.user.accessToken,
        body: method === 'POST' ? {} : undefined,
      });
      expect(response).toMatchObject({
        status: 403,
        body: { statusCode: 403, error: 'Forbidden', upgrade_required: true },
      });
    }
  });

  describe('on the starter plan', () => {
    beforeAll(() => setPlan(sut, fixture.user.email, 'starter'));

    it('explains the event naming its sender, with provider "local"', async () => {
      const response = await api(sut.url, 'GET', route(fixture, eventId, 'explain'), {
        token: fixture.user.accessToken,
      });
      expect(response.status).toBe(200);
      expect(response.body.provider).toBe('local');
      expect(response.body.explanation).toContain('Stripe');
      expect(response.body.explanation).toContain('invoice.paid');
    });

    it('answers the schema as raw TypeScript', async () => {
      const response = await api(sut.url, 'GET', route(fixture, eventId, 'schema'), {
        token: fixture.user.accessToken,
      });
      expect(response.status).toBe(200);
      expect(response.body.schema).toMatch(/^export interface StripeInvoicePaidEvent/);
      expect(response.body.schema).not.toContain('```');
    });

    it('defaults the handler to typescript + express and answers 400 listing the allowed values for a bad pair', async () => {
      const defaults = await api(sut.url, 'POST', route(fixture, eventId, 'handler'), {
        token: fixture.user.accessToken,
        body: {},
      });
      expect(defaults.status).toBe(200);
      expect(defaults.body.handler).toContain("from 'express'");
      for (const body of [
        { language: 'ruby' },
        { framework: 'django' },
        { language: 'python', framework: 'express' },
        { language: 'go', framework: 'fastify' },
        { language: 'constructor', framework: 'express' },
        { language: 'toString', framework: 'express' },
      ]) {
        const response = await api(sut.url, 'POST', route(fixture, eventId, 'handler'), {
          token: fixture.user.accessToken,
          body,
        });
        expect(response.status).toBe(400);
        expect(JSON.stringify(response.body.message)).toContain(
          'typescript: express, fastify, nextjs; javascript: express, fastify, nextjs; python: fastapi; go: gin',
        );
      }
    });

    it('diagnoses a failed delivery, and says plainly when nothing failed', async () => {
      const nothing = await api(sut.url, 'GET', route(fixture, eventId, 'diagnose'), {
        token: fixture.user.accessToken,
      });
      expect(nothing.body.diagnosis).toContain('nothing to diagnose');

      const sink = await HttpsDestination.start(answer(500, 'database is down'));
      try {
        await addDestination(sut.url, fixture, withUrlPassword(sink.url));
        const failing = await capture(fixture, STRIPE_BODY);
        await waitForEvent(sut.url, fixture, failing, hasStatus('failed'));
        const response = await api(sut.url, 'GET', route(fixture, failing, 'diagnose'), {
          token: fixture.user.accessToken,
        });
        expect(response.status).toBe(200);
        expect(response.body.diagnosis).toContain('answered 500');
        expect(response.body.diagnosis).toContain('database is down');
        // The URL's password (sent as Basic credentials) is not quoted in the answer, which is kept.
        expect(response.body.diagnosis).toContain(`${URL_USER}:[redacted]@`);
        expect(response.body.diagnosis).not.toContain(URL_PASSWORD);
      } finally {
        await sink.close();
      }
    });

    it('explains and writes a handler for a body whose JSON spells a NUL, which PostgreSQL text refuses', async () => {
      const nul = await capture(fixture, '{"type":"invoice.pa\\u0000id","id":"evt_nul"}', {
        headers: { 'content-type': 'application/json' },
      });
      for (const [method, operation] of [
        ['GET', 'explain'],
        ['POST', 'handler'],
      ]) {
        const response = await api(sut.url, method, route(fixture, nul, operation), {
          token: fixture.user.accessToken,
          body: method === 'POST' ? {} : undefined,
        });
        expect({ operation, status: response.status }).toEqual({ operation, status: 200 });
      }
    });

    it('rate-limits AI calls per user across the AI routes: the 31st in a minute gets 429', async () => {
      const caller = await createEndpoint(sut.url);
      await setPlan(sut, caller.user.email, 'pro');
      const own = await capture(caller, STRIPE_BODY);
      const responses = [];
      for (let call = 1; call <= 31; call++) {
        const operation = call % 2 === 0 ? 'explain' : 'schema';
        responses.push(
          await api(sut.url, 'GET', route(caller, own, operation), { token: caller.user.accessToken }),
        );
      }
      expect(responses.slice(0, 30).every((response) => response.status === 200)).toBe(true);
      expect(responses[30].status).toBe(429);
      expect(responses[30].body.message).toMatch(/too many calls from this user/);
    });

    it('types a payload on a thread of its own: captures are answered meanwhile, and one it cannot type in time gets 503', async () => {
      const caller = await createEndpoint(sut.url);
      await setPlan(sut, caller.user.email, 'pro');
      const token = caller.user.accessToken;
      // 1.3 MB of records that share no shape: 8 objects of 500 records, each of its own 12 fields (a nested
      // record or a string). quicktype gives every record an interface of its own: more than a minute.
      const parts = Array.from({ length: 8 }, (_, part) => [
        `part${part}`,
        Object.fromEntries(
          Array.from({ length: 500 }, (_, record) => [
            `r${part}_${record}`,
            Object.fromEntries(
              Array.from({ length: 12 }, (_, field) => [
                `f${part}_${(record * 7 + field) % 97}_${field}`,
                field % 3 === 0 ? `s${field}` : { [`g${part}_${record}`]: field, h: [field] },
              ]),
            ),
          ]),
        ),
      ]);
      const heavy = await capture(
        caller,
        JSON.stringify({ type: 'bulk.export', ...Object.fromEntries(parts) }),
      );
      let answered = false;
      const schema = api(sut.url, 'GET', route(caller, heavy, 'schema'), { token }).finally(() => {
        answered = true;
      });
      await sleep(1000);
      await capture(caller, '{"captured":"while the schema is typed"}');
      expect(answered).toBe(false);
      const response = await schema;
      expect(response.status).toBe(503);
      expect(response.body.message).toContain(`within ${LOCAL_AI_TIMEOUT_MS / 1000} s`);
      // The next call gets a new thread.
      const next = await api(sut.url, 'GET', route(caller, heavy, 'explain'), { token });
      expect(next.status).toBe(200);
      expect(next.body.explanation).toContain('bulk.export');
    }, 60_000);

    it("answers 404 for another user's event, even on a paid plan", async () => {
      const stranger = await createEndpoint(sut.url);
      await setPlan(sut, stranger.user.email, 'pro');
      for (const path of [
        route(fixture, eventId, 'explain'),
        `/api/endpoints/${stranger.endpointId}/events/${eventId}/ai/explain`,
      ]) {
        expect((await api(sut.url, 'GET', path, { token: stranger.user.accessToken })).status).toBe(404);
      }
    });
  });
});

describe('AI analysis with Gemini (a fake Gemini server)', () => {
  let sut: TestApp;
  let gemini: FakeGemini;
  let fixture: EndpointFixture;
  let eventId: string;

  beforeAll(async () => {
    gemini = await FakeGemini.start();
    sut = await startTestApp({
      GEMINI_API_KEY: 'test-key',
      GEMINI_BASE_URL: gemini.url,
      GEMINI_MODEL: 'gemini-test',
      DELIVERY_TIMEOUT_MS: '3000',
      DELIVERY_RETRY_DELAYS_MS: '1000,20000,90000,3600000',
    });
    fixture = await createEndpoint(sut.url);
    await setPlan(sut, fixture.user.email, 'team');
    eventId = await capture(fixture, STRIPE_BODY, { headers: STRIPE_HEADERS });
  });
  afterAll(async () => {
    await sut.close();
    await gemini.close();
  });

  it('strips fences, sends the body but no secret header value, and caches the answer', async () => {
    gemini.answerWith({ text: 'Here is the explanation:\n```text\nA Stripe invoice was paid.\n```' });
    const first = await api(sut.url, 'GET', route(fixture, eventId, 'explain'), {
      token: fixture.user.accessToken,
    });
    expect(first.body).toEqual({ explanation: 'A Stripe invoice was paid.', provider: 'gemini' });
    const [request] = gemini.requests;
    expect(request.url).toContain('/models/gemini-test:generateContent');
    expect(request.prompt).toContain('"amount_paid":2000');
    expect(request.prompt).not.toContain('provider-signature-value');
    expect(request.prompt).not.toContain('secret-bearer-value');

    const second = await api(sut.url, 'GET', route(fixture, eventId, 'explain'), {
      token: fixture.user.accessToken,
    });
    expect(second.body).toEqual(first.body);
    expect(gemini.requests).toHaveLength(1);
  });

  it('falls back to the local schema when Gemini answers invalid TypeScript', async () => {
    gemini.answerWith({ text: 'export interface Broken { id: string' });
    const response = await api(sut.url, 'GET', route(fixture, eventId, 'schema'), {
      token: fixture.user.accessToken,
    });
    expect(response.body.provider).toBe('local');
    expect(response.body.schema).toContain('export interface StripeInvoicePaidEvent');
  });

  it("states the service's configured time-out and retry schedule in the diagnosis prompt", async () => {
    gemini.answerWith({ text: 'Nothing failed.' });
    const fresh = await capture(fixture, STRIPE_BODY);
    const response = await api(sut.url, 'GET', route(fixture, fresh, 'diagnose'), {
      token: fixture.user.accessToken,
    });
    expect(response.body).toEqual({ diagnosis: 'Nothing failed.', provider: 'gemini' });
    const { prompt } = gemini.requests[gemini.requests.length - 1];
    expect(prompt).toContain('waits 3 s at most');
    expect(prompt).toContain('retries after 1 s, 20 s, 1.5 min and 1 h (5 attempts in all)');
  });

  it("leaves a destination URL's password out of the diagnosis prompt", async () => {
    const sink = await HttpsDestination.start(answer(500, 'database is down'));
    try {
      const other = await createEndpoint(sut.url, fixture.user);
      await addDestination(sut.url, other, withUrlPassword(sink.url));
      const failing = await capture(other, STRIPE_BODY);
      await waitForEvent(sut.url, other, failing, hasStatus('failed'));
      gemini.answerWith({ text: 'The destination answered 500: its database is down.' });
      const response = await api(sut.url, 'GET', route(other, failing, 'diagnose'), {
        token: fixture.user.accessToken,
      });
      expect(response.body.provider).toBe('gemini');
      const { prompt } = gemini.requests[gemini.requests.length - 1];
      expect(prompt).toContain(`${URL_USER}:[redacted]@`);
      expect(prompt).not.toContain(URL_PASSWORD);
    } finally {
      await sink.close();
    }
  });

  it('drops a cached diagnosis once new attempts happen, and asks again', async () => {
    const sink = await HttpsDestination.start();
    sink.respondWith(answer(500, 'database is down'));
    const database = new Client({ connectionString: sut.env.DATABASE_URL });
    await database.connect();
    try {
      const own = await createEndpoint(sut.url);
      await setPlan(sut, own.user.email, 'team');
      await addDestination(sut.url, own, sink.url);
      const failing = await capture(own, '{"n":1}');
      await waitForEvent(sut.url, own, failing, hasStatus('failed'));
      const diagnose = () =>
        api(sut.url, 'GET', route(own, failing, 'diagnose'), { token: own.user.accessToken });
      gemini.answerWith({ text: 'The destination answered 500.' });
      expect((await diagnose()).body.diagnosis).toBe('The destination answered 500.');
      expect((await diagnose()).body.diagnosis).toBe('The destination answered 500.');
      const asked = gemini.requests.length;

      // The retry (1 s later) succeeds: the diagnosis made before it is dropped and not served again.
      await waitForEvent(sut.url, own, failing, hasStatus('delivered'));
      gemini.answerWith({ text: 'Delivered on the second attempt.' });
      expect((await diagnose()).body.diagnosis).toBe('Delivered on the second attempt.');
      expect(gemini.requests).toHaveLength(asked + 1);
      const { rows } = await database.query(
        `select result from ai_results where event_id = $1 and operation = 'diagnose'`,
        [failing],
      );
      expect(rows).toEqual([{ result: 'Delivered on the second attempt.' }]);
    } finally {
      await database.end();
      await sink.close();
    }
  });

  it('falls back to the local engine when Gemini fails, and asks Gemini again next time', async () => {
    gemini.answerWith({ status: 500 });
    const response = await api(sut.url, 'GET', route(fixture, eventId, 'diagnose'), {
      token: fixture.user.accessToken,
    });
    expect(response).toMatchObject({ status: 200, body: { provider: 'local' } });
    expect(response.body.diagnosis).toContain('nothing to diagnose');

    // The fallback's answer was not kept: Gemini, back, answers the next call, and that answer is kept.
    gemini.answerWith({ text: 'Nothing failed: every delivery succeeded.' });
    const asked = gemini.requests.length;
    const again = await api(sut.url, 'GET', route(fixture, eventId, 'diagnose'), {
      token: fixture.user.accessToken,
    });
    expect(again.body).toEqual({
      diagnosis: 'Nothing failed: every delivery succeeded.',
      provider: 'gemini',
    });
    expect(gemini.requests).toHaveLength(asked + 1);
  });
});

describe('generated handlers, run for real', () => {
  let sut: TestApp;
  let fixture: EndpointFixture;
  let eventId: string;
  const children: ChildProcess[] = [];
  const secret = 'handler-test-secret';

  beforeAll(async () => {
    sut = await startTestApp();
    fixture = await createEndpoint(sut.url);
    await setPlan(sut, fixture.user.email, 'starter');
    eventId = await capture(fixture, STRIPE_BODY, { headers: STRIPE_HEADERS });
  });
  afterAll(async () => {
    children.forEach((child) => child.kill());
    await sut.close();
  });

  async function runHandler(language: string, framework: string): Promise<string> {
    const generated = await api(sut.url, 'POST', route(fixture, eventId, 'handler'), {
      token: fixture.user.accessToken,
      body: { language, framework },
    });
    expect(generated.status).toBe(200);
    const code =
      language === 'typescript'
        ? ts.transpileModule(generated.body.handler, {
            compilerOptions: {
              module: ts.ModuleKind.CommonJS,
              esModuleInterop: true,
              target: ts.ScriptTarget.ES2022,
            },
          }).outputText
        : generated.body.handler;
    const dir = join(__dirname, '.tmp');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${language}-${framework}-${Date.now()}.js`);
    writeFileSync(file, code);
    const port = await freePort();
    const child = spawn(process.execPath, [file], {
      env: { PATH: process.env.PATH, PORT: String(port), HOOKTRAIL_SECRET: secret },
      stdio: 'ignore',
    });
    children.push(child);
    const url = `http://127.0.0.1:${port}/webhooks/hooktrail`;
    for (let tries = 0; tries < 100; tries++) {
      if (
        await fetch(url, { method: 'POST' }).then(
          () => true,
          () => false,
        )
      )
        return url;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the ${language}/${framework} handler did not start`);
  }

  function signed(body: string, timestamp = Math.floor(Date.now() / 1000), id = 'delivery-1') {
    const signature = createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(`${id}.${timestamp}.${body}`)
      .digest('base64');
    return {
      'content-type': 'application/json',
      'hooktrail-id': id,
      'hooktrail-timestamp': String(timestamp),
      'hooktrail-signature': `v1,${signature}`,
    };
  }

  it.each([
    ['typescript', 'express'],
    ['javascript', 'fastify'],
  ])(
    '%s + %s accepts a signed delivery, and rejects a tampered body and a stale timestamp',
    async (language, framework) => {
      const url = await runHandler(language, framework);
      const accepted = await fetch(url, { method: 'POST', headers: signed(STRIPE_BODY), body: STRIPE_BODY });
      expect(accepted.status).toBe(200);
      expect(await accepted.json()).toEqual({ received: true });

      const tampered = await fetch(url, {
        method: 'POST',
        headers: signed(STRIPE_BODY),
        body: STRIPE_BODY.replace('2000', '9000'),
      });
      expect(tampered.status).toBe(401);
      const stale = await fetch(url, {
        method: 'POST',
        headers: signed(STRIPE_BODY, Math.floor(Date.now() / 1000) - 3600),
        body: STRIPE_BODY,
      });
      expect(stale.status).toBe(401);
    },
  );
});
