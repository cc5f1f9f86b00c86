import { changesOf, MAX_CHANGES_BYTES, MAX_DEPTH, REDACTED, TOO_DEEP } from './audit-changes';

const nested = (depth: number): unknown => {
  let value: unknown = { leaf: 1 };
  for (let level = 1; level < depth; level++) value = { a: value };
  return value;
};

describe(changesOf.name, () => {
  it('keeps a body without secrets as sent', () => {
    const body = { name: 'Stripe', is_active: false, metadata: { team: 'payments', tags: ['a', 1, null] } };
    expect(changesOf(body)).toEqual(body);
  });

  it.each([
    ['a destination secret', { url: 'https://x.example', secret: 'whsec_abc' }, { secret: REDACTED }],
    ['a refresh token', { refreshToken: 'r1' }, { refreshToken: REDACTED }],
    ['a password at any depth', { inbound_auth: { type: 'basic', password: 'p' } }, { password: REDACTED }],
    ['an Authorization header', { headers: { Authorization: 'Bearer x' } }, { Authorization: REDACTED }],
    ['an API key in any spelling', { api_key: 'k1', apiKey: 'k2', 'api-key': 'k3' }, { apiKey: REDACTED }],
    ['a verification secret', { verification: { provider: 'github', secret: 's' } }, { secret: REDACTED }],
  ])('redacts %s', (_label, body, expected) => {
    const changes = JSON.stringify(changesOf(body));
    for (const [key, value] of Object.entries(expected)) expect(changes).toContain(`"${key}":"${value}"`);
    expect(changes).not.toMatch(/whsec_abc|"r1"|"p"|Bearer x|"k[123]"|"s"/);
  });

  it('writes what jsonb refuses (NUL, a lone surrogate) as U+FFFD, in values and keys', () => {
    expect(changesOf({ name: 'a\u0000b', 'k\u0000': ['\uD800'], emoji: '😀' })).toEqual({
      name: 'a\uFFFDb',
      'k\uFFFD': ['\uFFFD'],
      emoji: '😀',
    });
  });

  it("redacts the password of a URL's user information, wherever the URL is, and keeps the rest", () => {
    expect(
      changesOf({
        url: 'https://hooks:s3cr%40t@api.example.com/in?x=1',
        channels: [{ target: 'https://a@b:pw@example.com/' }],
        plain: 'https://user@example.com/hook',
        text: 'not a url: https://x:y@',
      }),
    ).toEqual({
      url: `https://hooks:${REDACTED}@api.example.com/in?x=1`,
      channels: [{ target: `https://a%40b:${REDACTED}@example.com/` }],
      plain: 'https://user@example.com/hook',
      text: 'not a url: https://x:y@',
    });
  });

  it("redacts an inbound header's value, and only there", () => {
    expect(
      changesOf({
        inbound_auth: { type: 'header', name: 'X-Hook-Key', value: 'hunter2' },
        metadata: { value: 42 },
      }),
    ).toEqual({
      inbound_auth: { type: 'header', name: 'X-Hook-Key', value: REDACTED },
      metadata: { value: 42 },
    });
  });

  it('redacts a secret whose value is an object or an array whole, and walks arrays', () => {
    expect(changesOf({ items: [{ secret: 'a' }, { token: { nested: 'b' } }, { password: ['c'] }] })).toEqual({
      items: [{ secret: REDACTED }, { token: REDACTED }, { password: REDACTED }],
    });
  });

  it('keeps a removed secret as null: it holds no secret and says it was removed', () => {
    expect(changesOf({ secret: null, verification: null })).toEqual({ secret: null, verification: null });
  });

  it('cuts what is nested deeper than MAX_DEPTH', () => {
    const changes = JSON.stringify(changesOf({ deep: nested(MAX_DEPTH + 5) }));
    expect(changes).toContain(TOO_DEEP);
    expect(changes).not.toContain('leaf');
    expect(JSON.stringify(changesOf({ deep: nested(MAX_DEPTH - 1) }))).toContain('"leaf":1');
  });

  it('keeps only the top-level keys of a body over MAX_CHANGES_BYTES', () => {
    const body = { name: 'big', metadata: { blob: 'x'.repeat(MAX_CHANGES_BYTES) }, secret: 's' };
    expect(changesOf(body)).toEqual({ truncated: true, keys: ['name', 'metadata', 'secret'] });
  });

  it('judges the size after redaction: a long secret does not truncate the body', () => {
    expect(changesOf({ name: 'n', secret: 's'.repeat(MAX_CHANGES_BYTES) })).toEqual({
      name: 'n',
      secret: REDACTED,
    });
  });

  it.each([undefined, null, 'text', 42, [{ secret: 's' }]])(
    'records %j, not a JSON object, as {}',
    (body) => {
      expect(changesOf(body)).toEqual({});
    },
  );
});
