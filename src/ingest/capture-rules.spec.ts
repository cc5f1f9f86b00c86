import { createHmac } from 'node:crypto';
import {
  captureRulesOf,
  judgeCapture,
  type JudgedRequest,
  storedHeaders,
  type StoredRules,
} from './capture-rules';

const SECRET = 'shared-secret-of-the-test';

function rules(overrides: Partial<StoredRules> = {}): StoredRules {
  return {
    version: 3,
    verification: null,
    verificationSecret: null,
    inboundAuth: null,
    inboundAuthSecret: null,
    dedup: null,
    filters: [],
    ...overrides,
  };
}

function request(body: string, headers: Record<string, string> = {}): JudgedRequest {
  return { method: 'POST', query: '', headers, body: Buffer.from(body) };
}

const githubSignature = (body: string) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;

describe(judgeCapture.name, () => {
  it('lets a request without rules through unmarked, to every destination', () => {
    const sut = judgeCapture(captureRulesOf(rules()), request('{}'));

    expect(sut).toEqual({
      authorized: true,
      verification: { status: 'none', reason: null },
      forward: true,
      dedupKey: null,
      skip: [],
    });
  });

  it('refuses a request without the basic credential, and takes one with it', () => {
    const basic = captureRulesOf(
      rules({ inboundAuth: { type: 'basic', username: 'u' }, inboundAuthSecret: 'p@ss' }),
    );
    const encoded = Buffer.from('u:p@ss').toString('base64');
    const credential = `Basic ${encoded}`;

    expect(judgeCapture(basic, request('{}')).authorized).toBe(false);
    expect(judgeCapture(basic, request('{}', { authorization: `${credential}x` })).authorized).toBe(false);
    expect(judgeCapture(basic, request('{}', { authorization: credential })).authorized).toBe(true);
    expect(judgeCapture(basic, request('{}', { authorization: encoded })).authorized).toBe(false);
    expect(judgeCapture(basic, request('{}', { authorization: `Bearer ${encoded}` })).authorized).toBe(false);
  });

  it('takes the basic scheme in any case, followed by one space or more (RFC 9110 §11.1)', () => {
    const basic = captureRulesOf(
      rules({ inboundAuth: { type: 'basic', username: 'u' }, inboundAuthSecret: 'p@ss' }),
    );
    const encoded = Buffer.from('u:p@ss').toString('base64');

    for (const authorization of [`basic ${encoded}`, `BASIC ${encoded}`, `Basic   ${encoded}`])
      expect(judgeCapture(basic, request('{}', { authorization })).authorized).toBe(true);
  });

  it.each([
    ['enforce', false],
    ['flag', true],
  ] as const)(
    'in %s mode, a failed signature is forwarded: %s, and never takes a dedup key',
    (mode, forward) => {
      const github = captureRulesOf(
        rules({
          verification: { provider: 'github', mode },
          verificationSecret: SECRET,
          dedup: { key: 'provider', window_seconds: 60 },
        }),
      );
      const headers = {
        'x-github-delivery': 'delivery-1',
        'x-hub-signature-256': githubSignature('{"a":1}'),
      };

      const tampered = judgeCapture(github, request('{"a":2}', headers));
      const genuine = judgeCapture(github, request('{"a":1}', headers));

      expect(tampered).toMatchObject({ verification: { status: 'failed' }, forward, dedupKey: null });
      expect(genuine).toMatchObject({
        verification: { status: 'verified' },
        forward: true,
        dedupKey: 'delivery-1',
      });
    },
  );

  it('reads a body key at its dot path, and keeps a long one, or one with NUL, as its hash', () => {
    const byBody = captureRulesOf(rules({ dedup: { key: 'body:data.id', window_seconds: 60 } }));

    expect(judgeCapture(byBody, request('{"data":{"id":42}}')).dedupKey).toBe('42');
    expect(judgeCapture(byBody, request('{"data":{}}')).dedupKey).toBeNull();
    expect(judgeCapture(byBody, request(`{"data":{"id":"${'k'.repeat(300)}"}}`)).dedupKey).toMatch(
      /^sha256:[0-9a-f]{64}$/,
    );
    const withNul = judgeCapture(byBody, request('{"data":{"id":"a\\u0000b"}}')).dedupKey;
    expect(withNul).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(judgeCapture(byBody, request('{"data":{"id":"a\\u0000c"}}')).dedupKey).not.toBe(withNul);
  });

  it('skips the destinations whose filter the request does not match', () => {
    const filtered = captureRulesOf(
      rules({
        filters: [
          { destinationId: 'invoices', rule: { body: { type: { $startsWith: 'invoice.' } } } },
          { destinationId: 'charges', rule: { body: { type: { $startsWith: 'charge.' } } } },
        ],
      }),
    );

    expect(judgeCapture(filtered, request('{"type":"invoice.paid"}')).skip).toEqual(['charges']);
  });
});

describe(storedHeaders.name, () => {
  const headers = { authorization: 'Basic dTpw', 'x-token': 'tok', 'content-type': 'application/json' };

  it('keeps every header of an endpoint without inbound auth, the same object', () => {
    expect(storedHeaders(captureRulesOf(rules()), headers)).toBe(headers);
  });

  it('leaves out the header that carried the inbound credential, and no other', () => {
    const basic = captureRulesOf(
      rules({ inboundAuth: { type: 'basic', username: 'u' }, inboundAuthSecret: 'p' }),
    );
    const header = captureRulesOf(
      rules({ inboundAuth: { type: 'header', name: 'x-token' }, inboundAuthSecret: 'tok' }),
    );

    expect(storedHeaders(basic, headers)).toEqual({ 'x-token': 'tok', 'content-type': 'application/json' });
    expect(storedHeaders(header, headers)).toEqual({
      authorization: 'Basic dTpw',
      'content-type': 'application/json',
    });
    expect(headers).toHaveProperty('authorization');
  });
});
