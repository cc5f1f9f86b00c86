import { Client } from 'pg';
import {
  fillPath,
  loadOpenApi,
  type Operation,
  operationsOf,
  type Parameter,
  type Schema,
  validBody,
  validValue,
} from '../support/openapi-document';
import { startTestApp, type TestApp } from '../support/test-app';
import { createTenant, databaseFingerprint, pathRecipes, type Tenant } from '../support/tenant-fixture';

/** One hostile request: the raw body (or query string) and what must come back. */
interface Variant {
  label: string;
  body?: string;
  query?: string;
  contentType?: string;
  status: number;
  /** The field the 400 message must name. */
  field?: string;
}

const API_BODY_LIMIT_BYTES = 1024 * 1024;
const HUGE = 'x'.repeat(100_000);
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** The JSON text of `body` with `name` set to the raw JSON `fragment` (or left out when undefined). */
function withProperty(body: Record<string, unknown>, name: string, fragment: string | undefined): string {
  const rest = Object.fromEntries(Object.entries(body).filter(([key]) => key !== name));
  const restText = JSON.stringify(rest).slice(1, -1);
  if (fragment === undefined) return `{${restText}}`;
  return `{${[`${JSON.stringify(name)}:${fragment}`, restText].filter(Boolean).join(',')}}`;
}

/** JSON fragments of the wrong type for a property of this schema. */
function wrongTypes(schema: Schema): string[] {
  const byType: Record<string, string> = {
    string: '"text"',
    boolean: 'true',
    integer: '12345',
    // not an integer: for an integer property, a whole number is the right type
    number: '12345.5',
    object: '{}',
    array: '[]',
  };
  const wrong = Object.entries(byType)
    .filter(([type]) => type !== schema.type && !(schema.type === 'number' && type === 'integer'))
    .map(([, fragment]) => fragment);
  return schema.nullable ? wrong : [...wrong, 'null'];
}

/** Hostile values for one property: wrong types, out of range, huge, deep, unstorable, prototype keys. */
function propertyVariants(
  body: Record<string, unknown>,
  name: string,
  schema: Schema,
  required: boolean,
): Variant[] {
  const fragments: [string, string][] = wrongTypes(schema).map((fragment) => [
    `${fragment} (wrong type)`,
    fragment,
  ]);
  if (schema.enum) fragments.push(['a value outside the enum', '"not-a-member"']);
  if (schema.type === 'string' || schema.enum) {
    fragments.push(['a 100 000-character string', JSON.stringify(HUGE)]);
    fragments.push(['a NUL character', '"a\\u0000b"'], ['an unpaired surrogate', '"a\\ud800b"']);
  }
  if (schema.maxLength !== undefined)
    fragments.push([`${schema.maxLength + 1} characters`, JSON.stringify('x'.repeat(schema.maxLength + 1))]);
  if ((schema.minLength ?? 0) > 0)
    fragments.push([
      `${schema.minLength! - 1} characters`,
      JSON.stringify('x'.repeat(schema.minLength! - 1)),
    ]);
  if (schema.type === 'object') {
    fragments.push(['an object with a 100 000-character value', JSON.stringify({ k: HUGE })]);
    fragments.push(['an object with a NUL in a key', '{"a\\u0000b":1}']);
  }
  fragments.push(['JSON nested 10 000 levels deep', deepObject(10_000)]);
  fragments.push(['JSON nested 40 levels deep', deepObject(40)]);
  const variants: Variant[] = fragments.map(([label, fragment]) => ({
    label: `${name}: ${label}`,
    body: withProperty(body, name, fragment),
    status: 400,
    field: name,
  }));
  // Fastify's parser refuses prototype pollution before anything reads the body: 400, naming no field.
  variants.push({
    label: `${name}: an object with a __proto__ key`,
    body: withProperty(body, name, '{"__proto__":{"polluted":true}}'),
    status: 400,
  });
  if (required)
    variants.push({
      label: `${name}: missing`,
      body: withProperty(body, name, undefined),
      status: 400,
      field: name,
    });
  return variants;
}

/** Hostile bodies as a whole: not JSON, not an object, extra fields, prototype keys, depth, size, type. */
function bodyVariants(body: Record<string, unknown>): Variant[] {
  const valid = JSON.stringify(body);
  const inner = valid.slice(1, -1);
  const prefixed = (fragment: string) => `{${[fragment, inner].filter(Boolean).join(',')}}`;
  return [
    { label: 'malformed JSON', body: valid.slice(0, -1), status: 400 },
    { label: 'an empty body with a JSON content type', body: '', status: 400 },
    { label: 'JSON null', body: 'null', status: 400 },
    { label: 'a JSON array', body: `[${valid}]`, status: 400 },
    { label: 'a JSON string', body: JSON.stringify(valid), status: 400 },
    { label: 'a JSON number', body: '42', status: 400 },
    {
      label: 'an unknown field',
      body: prefixed('"unexpected_field":1'),
      status: 400,
      field: 'unexpected_field',
    },
    { label: 'a top-level __proto__ key', body: prefixed('"__proto__":{"plan":"team"}'), status: 400 },
    {
      label: 'a constructor.prototype key',
      body: prefixed('"constructor":{"prototype":{"x":1}}'),
      status: 400,
    },
    { label: 'an array nested 100 000 levels deep', body: deepArray(100_000), status: 400 },
    {
      label: 'an extra field nested 10 000 levels deep',
      body: prefixed(`"deep":${deepObject(10_000)}`),
      status: 400,
    },
    { label: 'valid JSON sent as text/plain', body: valid, contentType: 'text/plain', status: 400 },
    {
      label: 'a body that is not JSON (application/xml)',
      body: '<a/>',
      contentType: 'application/xml',
      status: 415,
    },
    {
      label: 'a body over the API body limit',
      body: prefixed(`"padding":${JSON.stringify('x'.repeat(API_BODY_LIMIT_BYTES))}`),
      status: 413,
    },
  ];
}

/** Hostile query strings for one query parameter. */
function queryVariants(parameter: Parameter): Variant[] {
  const { name, schema = {} } = parameter;
  const values: [string, string][] = [
    ['a 8 000-character value', 'x'.repeat(8000)],
    ['a NUL character', '%00'],
  ];
  if (schema.type === 'integer')
    values.push(['not a number', 'abc'], ['a fraction', '1.5'], ['a negative number', '-1']);
  if (schema.minimum !== undefined) values.push(['below the minimum', String(schema.minimum - 1)]);
  if (schema.maximum !== undefined) values.push(['above the maximum', String(schema.maximum + 1)]);
  if (schema.enum) values.push(['a value outside the enum', 'not-a-member']);
  if (schema.maxLength !== undefined)
    values.push([`${schema.maxLength + 1} characters`, 'x'.repeat(schema.maxLength + 1)]);
  const valid = encodeURIComponent(String(validValue(schema)));
  return [
    ...values.map(([label, value]) => ({
      label: `?${name}: ${label}`,
      query: `${name}=${value}`,
      status: 400,
      field: name,
    })),
    { label: `?${name}: repeated`, query: `${name}=${valid}&${name}=${valid}`, status: 400, field: name },
    { label: `?${name}: as an object`, query: `${name}[a]=1`, status: 400, field: name },
  ];
}

const QUERY_LEVEL_VARIANTS: Variant[] = [
  {
    label: 'an unknown query parameter',
    query: 'unexpected_parameter=1',
    status: 400,
    field: 'unexpected_parameter',
  },
  { label: 'a __proto__ query parameter', query: '__proto__[polluted]=1', status: 400, field: '__proto__' },
];

function variantsOf(operation: Operation): Variant[] {
  const query = operation.parameters.filter((parameter) => parameter.in === 'query');
  const variants = query.length > 0 ? [...query.flatMap(queryVariants), ...QUERY_LEVEL_VARIANTS] : [];
  const schema = operation.body;
  if (!schema) return variants;
  const body = validBody(schema);
  const required = new Set(schema.required ?? []);
  return [
    ...variants,
    ...bodyVariants(body),
    ...Object.entries(schema.properties ?? {}).flatMap(([name, property]) =>
      propertyVariants(body, name, property, required.has(name)),
    ),
  ];
}

/** The status and JSON of one raw request. */
async function send(
  baseUrl: string,
  operation: Operation,
  tenant: Tenant,
  variant: Partial<Variant>,
): Promise<{ status: number; body: Record<string, unknown> | undefined; text: string }> {
  const headers: Record<string, string> = {};
  if (operation.isProtected) headers.authorization = `Bearer ${tenant.user.accessToken}`;
  if (variant.body !== undefined) headers['content-type'] = variant.contentType ?? 'application/json';
  const path = fillPath(operation.path, pathRecipes(tenant));
  const response = await fetch(`${baseUrl}${path}${variant.query ? `?${variant.query}` : ''}`, {
    method: operation.method,
    headers,
    body: variant.body,
  });
  const text = await response.text();
  let body: Record<string, unknown> | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

/**
 * Every DTO of the API, found by walking the OpenAPI document (every operation with a request body or
 * query parameters), fed with hostile variants derived from its schema. Each must answer its 4xx in
 * Nest's error shape with a message (naming the field where there is one) and write nothing: a
 * fingerprint of every row of every table is the same before and after.
 */
describe('hostile input on every DTO (generated from the OpenAPI document)', () => {
  let sut: TestApp;
  let db: Client;
  let operations: Operation[];
  const tenants: Tenant[] = [];

  /** Per-user rate limits (AI routes: 30 a minute) would answer 429 first: a fresh tenant every 25 calls. */
  let callsOfTenant = 0;
  const tenantFor = async (operation: Operation): Promise<Tenant> => {
    if (operation.statuses.includes('429') && ++callsOfTenant > 25) {
      tenants.push(await createTenant(sut.url, db, `owner${tenants.length}`));
      callsOfTenant = 1;
    }
    return tenants[tenants.length - 1];
  };

  beforeAll(async () => {
    sut = await startTestApp({ APP_ROLE: 'api' });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    tenants.push(await createTenant(sut.url, db, 'owner'));
    operations = operationsOf(await loadOpenApi(sut.url)).filter(
      (operation) => operation.body || operation.parameters.some((parameter) => parameter.in === 'query'),
    );
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
  });

  it('finds the DTOs of every feature in the document', () => {
    expect(operations.map((operation) => operation.label)).toEqual(
      expect.arrayContaining([
        'POST /api/auth/register',
        'POST /api/auth/login',
        'POST /api/auth/refresh',
        'POST /api/auth/logout',
        'POST /api/endpoints',
        'PATCH /api/endpoints/{id}',
        'POST /api/endpoints/{id}/destinations',
        'PATCH /api/endpoints/{id}/destinations/{dId}',
        'GET /api/endpoints/{id}/events',
        'POST /api/endpoints/{id}/events/{eId}/ai/handler',
      ]),
    );
  });

  it('answers every hostile variant with its 4xx and a clear message, and stores nothing', async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const operation of operations) {
      for (const variant of variantsOf(operation)) {
        const tenant = await tenantFor(operation);
        const before = await databaseFingerprint(db);
        const response = await send(sut.url, operation, tenant, variant);
        const after = await databaseFingerprint(db);
        checked++;
        const where = `${operation.label} with ${variant.label}`;
        const message = JSON.stringify(response.body?.message ?? '');
        if (response.status !== variant.status)
          problems.push(
            `${where}: ${response.status} instead of ${variant.status}: ${response.text.slice(0, 200)}`,
          );
        else if (response.body?.statusCode !== variant.status || typeof response.body?.error !== 'string')
          problems.push(
            `${where}: not in the {statusCode, error, message} shape: ${response.text.slice(0, 200)}`,
          );
        else if (message.length <= 2) problems.push(`${where}: no message`);
        else if (variant.field && !message.includes(variant.field))
          problems.push(`${where}: the message does not name ${variant.field}: ${message.slice(0, 200)}`);
        if (JSON.stringify(after) !== JSON.stringify(before)) problems.push(`${where}: the database changed`);
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(200);
  });

  it('accepts the valid body every variant starts from (so each variant fails for its one fault only)', async () => {
    // An invitation's token travels only by mail: any token a document can give is unknown, and said so.
    const unknownToken = 'POST /api/invitations/accept';
    const refused: string[] = [];
    for (const operation of operations.filter((candidate) => candidate.body)) {
      const tenant = await tenantFor(operation);
      const response = await send(sut.url, operation, tenant, {
        body: JSON.stringify(validBody(operation.body!)),
      });
      if (operation.label === unknownToken) {
        expect([response.status, response.text]).toEqual([400, expect.stringContaining('token')]);
        continue;
      }
      if ([400, 413, 415].includes(response.status) || response.status >= 500)
        refused.push(`${operation.label}: ${response.status} ${response.text.slice(0, 200)}`);
    }
    expect(refused).toEqual([]);
  });
});

describe('hostile ingest rules', () => {
  let sut: TestApp;
  let db: Client;
  let tenant: Tenant;
  /** A request answered later than this is treated as hanging (each takes milliseconds). */
  const HANG_MS = 5000;

  beforeAll(async () => {
    sut = await startTestApp({ APP_ROLE: 'api' });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    tenant = await createTenant(sut.url, db, 'rules');
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
  });

  const nested = (depth: number, leaf: string) => `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
  // Prototype keys never reach validation: the API's JSON parser refuses a body with them (the filter's own
  // refusal of them is proven by its unit tests).
  const huge = (count: number) => `[${Array.from({ length: count }, (_, n) => n).join(',')}]`;

  it.each([
    [
      'a filter nested past its depth limit',
      'POST',
      'destinations',
      `{"filter":{"body":${nested(12, '1')}}}`,
      'filter.body',
    ],
    [
      'a filter nested past the API depth limit',
      'POST',
      'destinations',
      `{"filter":{"body":${nested(5000, '1')}}}`,
      'filter',
    ],
    [
      'a huge $in',
      'POST',
      'destinations',
      `{"filter":{"body":{"id":{"$in":${huge(100_000)}}}}}`,
      'filter.body.id.$in',
    ],
    [
      'a __proto__ key',
      'POST',
      'destinations',
      '{"filter":{"body":{"__proto__":{"polluted":true}}}}',
      'not valid JSON',
    ],
    [
      'a constructor key',
      'PATCH',
      'destination',
      '{"filter":{"body":{"constructor":{"prototype":1}}}}',
      'not valid JSON',
    ],
    [
      'a constructor key with a plain value',
      'PATCH',
      'destination',
      '{"filter":{"headers":{"constructor":"y"}}}',
      'filter has a property named constructor',
    ],
    [
      'a constructor key in metadata',
      'PATCH',
      'endpoint',
      '{"metadata":{"constructor":{"a":1}}}',
      'metadata has a property named constructor',
    ],
    [
      'a deep $or chain',
      'PATCH',
      'destination',
      `{"filter":{"body":${'{"$or":['.repeat(5)}1${']}'.repeat(5)}}}`,
      'filter.body.$or[0].$or[0]',
    ],
    [
      'a __proto__ in verification',
      'PATCH',
      'endpoint',
      '{"verification":{"provider":"stripe","secret":"s","__proto__":{"mode":"flag"}}}',
      'not valid JSON',
    ],
    [
      'a huge verification secret',
      'PATCH',
      'endpoint',
      `{"verification":{"provider":"stripe","secret":"${'s'.repeat(100_000)}"}}`,
      'verification.secret',
    ],
    [
      'an inbound auth with an array',
      'PATCH',
      'endpoint',
      '{"inbound_auth":[{"type":"basic"}]}',
      'inbound_auth',
    ],
    [
      'a dedup path of 10,000 dots',
      'PATCH',
      'endpoint',
      `{"dedup":{"key":"body:${'a.'.repeat(10_000)}a"}}`,
      'dedup.key',
    ],
  ])(
    'answers %s with 400 naming it, never a 500 or a hang, and changes nothing',
    async (_label, method, target, body, field) => {
      const endpoint = tenant.endpointId;
      const path =
        target === 'endpoint'
          ? `/api/endpoints/${endpoint}`
          : target === 'destinations'
            ? `/api/endpoints/${endpoint}/destinations`
            : `/api/endpoints/${endpoint}/destinations/${tenant.destinationId}`;
      const before = await databaseFingerprint(db);
      const started = Date.now();

      const response = await fetch(`${sut.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${tenant.user.accessToken}`, 'content-type': 'application/json' },
        body,
      });

      expect(Date.now() - started).toBeLessThan(HANG_MS);
      expect(response.status).toBe(400);
      expect(JSON.stringify(((await response.json()) as { message: unknown }).message)).toContain(field);
      expect(await databaseFingerprint(db)).toEqual(before);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );
});
