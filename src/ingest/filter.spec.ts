import {
  evaluateFilter,
  FILTER_LIMITS,
  filterRuleError,
  FilterSubject,
  type FilterInput,
  type FilterRule,
  type FilterVerdict,
} from './filter';

interface Request {
  method?: string;
  headers?: FilterInput['headers'];
  query?: string;
  /** A Buffer is sent as it is; anything else as JSON. */
  body?: unknown;
}

function subjectOf({ method = 'POST', headers = {}, query = '', body }: Request = {}): FilterSubject {
  const raw =
    body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  return new FilterSubject({ method, headers, query, body: raw });
}

/** The verdict on a rule that validation accepts. */
function verdict(rule: FilterRule, request?: Request): FilterVerdict {
  expect(filterRuleError(rule)).toBeNull();
  return evaluateFilter(rule, subjectOf(request));
}

/** Why the rule does not match; null when it does. */
function reasonOf(rule: FilterRule, request?: Request): string | null {
  const { matches, reason } = verdict(rule, request);
  expect(matches).toBe(reason === null);
  return reason;
}

/** `{"body": {"a": {"a": ... 1}}}` with `levels` objects under body, as JSON text. */
function nestedJson(levels: number): string {
  return `{"body":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`;
}

const charge = {
  type: 'charge.failed',
  amount: 1200,
  currency: 'usd',
  created: '2024-05-01T10:00:00Z',
  livemode: false,
  metadata: null,
  tags: ['vip', 'eu'],
  items: [
    { sku: 'a', qty: 1 },
    { sku: 'b', qty: 2 },
  ],
  data: { object: { id: 'ch_1', amount: 1200, customer: { country: 'FR' } } },
};

describe(evaluateFilter.name, () => {
  describe('on the body', () => {
    it.each<[string, Record<string, unknown>, string | null]>([
      ['a string', { type: 'charge.failed' }, null],
      ['another string', { type: 'invoice.paid' }, 'body.type is "charge.failed", not "invoice.paid"'],
      ['a number', { amount: 1200 }, null],
      ['a number as text, not coerced', { amount: '1200' }, 'body.amount is 1200, not "1200"'],
      ['false', { livemode: false }, null],
      ['null', { metadata: null }, null],
      ['a missing key', { refund: 'r_1' }, 'body.refund is missing'],
      ['nested keys, partially', { data: { object: { customer: { country: 'FR' } } } }, null],
      ['under a missing object', { data: { refund: { id: 'r_1' } } }, 'body.data.refund is missing'],
      ['keys of a non-object', { type: { kind: 'x' } }, 'body.type is "charge.failed", not an object'],
      [
        'an operator deep down',
        { data: { object: { amount: { $gte: 5000 } } } },
        'body.data.object.amount is 1200, not >= 5000',
      ],
    ])('matches %s', (_name, rule, reason) => {
      expect(reasonOf({ body: rule }, { body: charge })).toBe(reason);
    });

    it('matches a body that is not an object at its root', () => {
      expect(reasonOf({ body: false }, { body: false })).toBeNull();
      expect(reasonOf({ body: 'hello' }, { body: 'hello' })).toBeNull();
      expect(reasonOf({ body: { $startsWith: 'he' } }, { body: 'hello' })).toBeNull();
      expect(reasonOf({ body: { type: 'x' } }, { body: 'hello' })).toBe('body is "hello", not an object');
    });
  });

  describe('on arrays', () => {
    it.each<[string, Record<string, unknown>, string | null]>([
      ['a scalar in the array', { tags: 'vip' }, null],
      ['a scalar not in it', { tags: 'us' }, 'body.tags is ["vip","eu"], which does not contain "us"'],
      ['an equal array', { tags: ['vip', 'eu'] }, null],
      [
        'the same items in another order',
        { tags: ['eu', 'vip'] },
        'body.tags is ["vip","eu"], not ["eu","vip"]',
      ],
      ['fewer items', { tags: ['vip'] }, 'body.tags is ["vip","eu"], not ["vip"]'],
      ['an element with the keys', { items: { sku: 'b', qty: 2 } }, null],
      [
        'no element with the keys',
        { items: { sku: 'c' } },
        'none of the elements of body.items matched (first: body.items[0].sku is "a", not "c")',
      ],
    ])('matches %s', (_name, rule, reason) => {
      expect(reasonOf({ body: rule }, { body: charge })).toBe(reason);
    });

    it('says when an array has no element to match', () => {
      expect(reasonOf({ body: { items: { sku: 'a' } } }, { body: { items: [] } })).toBe(
        'there are no elements of body.items',
      );
    });
  });

  describe('with operators', () => {
    it.each<[string, Record<string, unknown>, string | null]>([
      ['$eq', { type: { $eq: 'charge.failed' } }, null],
      ['$eq on an array', { tags: { $eq: 'eu' } }, null],
      ['$eq, an object exactly', { data: { object: { customer: { $eq: { country: 'FR' } } } } }, null],
      [
        '$eq, not a part of an object',
        { data: { $eq: { object: { id: 'ch_1' } } } },
        'body.data is {"object":{"id":"ch_1","amount":1200,"customer":{"country":"…, not {"object":{"id":"ch_1"}}',
      ],
      ['$neq', { type: { $neq: 'charge.succeeded' } }, null],
      [
        '$neq, equal',
        { type: { $neq: 'charge.failed' } },
        'body.type is "charge.failed", which $neq "charge.failed" excludes',
      ],
      [
        '$neq, in an array',
        { tags: { $neq: 'vip' } },
        'body.tags is ["vip","eu"], which $neq "vip" excludes',
      ],
      ['$neq, missing', { refund: { $neq: 'r_1' } }, null],
      ['$in', { currency: { $in: ['usd', 'eur'] } }, null],
      ['$in, not in', { currency: { $in: ['gbp'] } }, 'body.currency is "usd", not one of ["gbp"]'],
      ['$in, an array element', { tags: { $in: ['eu', 'us'] } }, null],
      ['$in, missing', { refund: { $in: ['r_1'] } }, 'body.refund is missing'],
      ['$nin', { currency: { $nin: ['gbp'] } }, null],
      ['$nin, in', { currency: { $nin: ['usd'] } }, 'body.currency is "usd", one of the excluded ["usd"]'],
      [
        '$nin, an array element',
        { tags: { $nin: ['eu'] } },
        'body.tags is ["vip","eu"], one of the excluded ["eu"]',
      ],
      ['$nin, missing', { refund: { $nin: ['r_1'] } }, null],
      ['$exists: true on null', { metadata: { $exists: true } }, null],
      ['$exists: true, missing', { refund: { $exists: true } }, 'body.refund is missing'],
      ['$exists: false', { refund: { $exists: false } }, null],
      [
        '$exists: false, present',
        { livemode: { $exists: false } },
        'body.livemode is false, but $exists is false',
      ],
      ['$gt', { amount: { $gt: 1000 } }, null],
      ['$gt, equal', { amount: { $gt: 1200 } }, 'body.amount is 1200, not > 1200'],
      ['$gte', { amount: { $gte: 1200 } }, null],
      ['$lt', { amount: { $lt: 1200 } }, 'body.amount is 1200, not < 1200'],
      ['$lte', { amount: { $lte: 1200 } }, null],
      ['$gte on ISO dates', { created: { $gte: '2024-01-01' } }, null],
      [
        '$lt on ISO dates',
        { created: { $lt: '2024-01-01' } },
        'body.created is "2024-05-01T10:00:00Z", not < "2024-01-01"',
      ],
      ['$gt, a number against a string', { amount: { $gt: '1000' } }, 'body.amount is 1200, not > "1000"'],
      ['$gt on an array', { tags: { $gt: 'a' } }, 'body.tags is ["vip","eu"], not > "a"'],
      ['a range', { amount: { $gte: 1000, $lt: 2000 } }, null],
      ['a range, outside', { amount: { $gte: 1000, $lt: 1100 } }, 'body.amount is 1200, not < 1100'],
      ['$startsWith', { type: { $startsWith: 'charge.' } }, null],
      [
        '$startsWith, another prefix',
        { type: { $startsWith: 'invoice.' } },
        'body.type is "charge.failed", which does not start with "invoice."',
      ],
      [
        '$startsWith on a number',
        { amount: { $startsWith: '12' } },
        'body.amount is 1200, which does not start with "12"',
      ],
      ['$contains in a string', { type: { $contains: 'fail' } }, null],
      ['$contains in an array', { tags: { $contains: 'eu' } }, null],
      [
        '$contains, no equal element',
        { tags: { $contains: 'e' } },
        'body.tags is ["vip","eu"], which does not contain "e"',
      ],
      [
        '$contains on a number',
        { amount: { $contains: '1' } },
        'body.amount is 1200, which does not contain "1"',
      ],
    ])('%s', (_name, rule, reason) => {
      expect(reasonOf({ body: rule }, { body: charge })).toBe(reason);
    });
  });

  describe('with combinators', () => {
    it.each<[string, Record<string, unknown>, string | null]>([
      ['$and', { $and: [{ type: 'charge.failed' }, { amount: { $gt: 100 } }] }, null],
      [
        '$and, one failing',
        { $and: [{ type: 'charge.failed' }, { amount: { $gt: 5000 } }] },
        'body.amount is 1200, not > 5000',
      ],
      ['$or', { $or: [{ type: 'invoice.paid' }, { amount: { $gt: 1000 } }] }, null],
      [
        '$or, none',
        { $or: [{ type: 'invoice.paid' }, { type: 'invoice.failed' }] },
        'none of the alternatives matched (first: body.type is "charge.failed", not "invoice.paid")',
      ],
      ['$or of values', { type: { $or: ['charge.refunded', { $startsWith: 'charge.f' }] } }, null],
      ['$not', { $not: { type: 'invoice.paid' } }, null],
      [
        '$not, matching',
        { type: { $not: { $startsWith: 'charge.' } } },
        'the rule under body.type.$not matched',
      ],
      ['$not of a missing key', { refund: { $not: { $exists: true } } }, null],
    ])('%s', (_name, rule, reason) => {
      expect(reasonOf({ body: rule }, { body: charge })).toBe(reason);
    });
  });

  describe('on headers', () => {
    const headers = { 'x-github-event': 'push', 'x-tag': ['a', 'b'] };

    it.each<[string, Record<string, unknown>, string | null]>([
      ['a value', { 'x-github-event': 'push' }, null],
      [
        'another value',
        { 'x-github-event': { $in: ['issues'] } },
        'headers.x-github-event is "push", not one of ["issues"]',
      ],
      ['a missing header', { 'x-env': 'live' }, 'headers.x-env is missing'],
      ['a header that must be missing', { 'x-env': { $exists: false } }, null],
      ['one of the values of a repeated header', { 'x-tag': 'b' }, null],
      ['an operator on one of them', { 'x-tag': { $startsWith: 'b' } }, null],
      ['$neq on one of them', { 'x-tag': { $neq: 'a' } }, null],
      [
        'none of them',
        { 'x-tag': 'c' },
        'none of the values of headers.x-tag matched (first: headers.x-tag[0] is "a", not "c")',
      ],
      ['names under $or', { $or: [{ 'x-env': 'live' }, { 'x-github-event': 'push' }] }, null],
      ['names under $not', { $not: { 'x-github-event': 'push' } }, 'the rule under headers.$not matched'],
    ])('matches %s', (_name, rule, reason) => {
      expect(reasonOf({ headers: rule }, { headers })).toBe(reason);
    });
  });

  describe('on the query', () => {
    const query = 'page=2&tag=a&tag=b&q=a%20b+c';

    it.each<[string, Record<string, unknown>, string | null]>([
      ['a parameter', { page: '2' }, null],
      ['another value', { page: '3' }, 'query.page is "2", not "3"'],
      ['a decoded value', { q: 'a b c' }, null],
      ['one value of a repeated key', { tag: 'b' }, null],
      ['all values of a repeated key', { tag: ['a', 'b'] }, null],
      ['$in on a repeated key', { tag: { $in: ['b', 'c'] } }, null],
      [
        '$contains on a repeated key',
        { tag: { $contains: 'c' } },
        'query.tag is ["a","b"], which does not contain "c"',
      ],
      ['a missing key', { sort: { $exists: false } }, null],
    ])('matches %s', (_name, rule, reason) => {
      expect(reasonOf({ query: rule }, { query })).toBe(reason);
    });
  });

  describe('on the method', () => {
    it.each<[FilterRule['method'], string, string | null]>([
      ['POST', 'POST', null],
      ['POST', 'GET', 'method is "GET", not "POST"'],
      [{ $in: ['PUT', 'PATCH'] }, 'PATCH', null],
      [{ $not: 'GET' }, 'GET', 'the rule under method.$not matched'],
    ])('matches %j on %s', (rule, method, reason) => {
      expect(reasonOf({ method: rule }, { method })).toBe(reason);
    });
  });

  describe('on a body that is not JSON', () => {
    it.each<[string, Buffer]>([
      ['text', Buffer.from('type=charge.failed')],
      ['nothing', Buffer.alloc(0)],
    ])('sees %s as missing: only rules for a missing body match', (_name, body) => {
      expect(reasonOf({ body: { type: 'charge.failed' } }, { body })).toBe('body is missing');
      expect(reasonOf({ body: { type: { $exists: false } } }, { body })).toBe('body is missing');
      expect(reasonOf({ body: { $exists: false } }, { body })).toBeNull();
      expect(reasonOf({ body: { $not: { type: 'charge.failed' } } }, { body })).toBeNull();
    });
  });

  it('needs every part of the rule to match, and says why the first that fails does not', () => {
    const request = { method: 'POST', headers: { 'x-env': 'live' }, query: 'v=1', body: charge };
    const rule = {
      body: { type: 'charge.failed' },
      query: { v: '1' },
      headers: { 'x-env': 'live' },
      method: 'POST',
    };
    expect(reasonOf(rule, request)).toBeNull();
    expect(reasonOf({ ...rule, query: { v: '2' } }, request)).toBe('query.v is "1", not "2"');
  });

  it('parses the body once per request, and only for a rule on the body that gets to it', () => {
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const subject = subjectOf({ method: 'POST', body: charge });
      evaluateFilter({ method: 'POST' }, subject);
      evaluateFilter({ method: 'GET', body: { type: 'charge.failed' } }, subject);
      expect(parse).not.toHaveBeenCalled();
      expect(evaluateFilter({ body: { type: 'charge.failed' } }, subject).matches).toBe(true);
      expect(evaluateFilter({ body: { amount: 1 } }, subject).matches).toBe(false);
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });

  it('is not fooled by a polluted Object.prototype', () => {
    const prototype = Object.prototype as Record<string, unknown>;
    prototype.polluted = 'yes';
    try {
      expect(reasonOf({ body: { polluted: 'yes' } }, { body: {} })).toBe('body.polluted is missing');
      expect(reasonOf({ headers: { polluted: { $exists: false } } })).toBeNull();
      expect(reasonOf({ query: { polluted: { $exists: false } } })).toBeNull();
    } finally {
      delete prototype.polluted;
    }
  });

  it('does not take a "__proto__" key of the body for its prototype', () => {
    const body = Buffer.from('{"__proto__": {"admin": true}}');
    expect(reasonOf({ body: { admin: true } }, { body })).toBe('body.admin is missing');
  });

  it('cuts long values short in its reasons', () => {
    expect(reasonOf({ body: { text: 'y' } }, { body: { text: 'x'.repeat(1000) } })).toBe(
      `body.text is "${'x'.repeat(59)}…, not "y"`,
    );
    const numbers = Array.from({ length: 10_000 }, (_, index) => index);
    expect(reasonOf({ body: { $in: ['x'] } }, { body: numbers })).toBe(
      `body is ${JSON.stringify(numbers).slice(0, 60)}…, not one of ["x"]`,
    );
  });

  it('explains a mismatch on a very deep body without walking all of it', () => {
    const body = Buffer.from(nestedJson(100_000).slice('{"body":'.length, -1));
    const reason = reasonOf({ body: { a: { $eq: { a: 1 } } } }, { body });
    expect(reason).toMatch(/^body\.a is \{"a":\{"a":.*…, not \{"a":1\}$/);
  });

  it('matches nothing on an operator it does not know (a rule that was not validated)', () => {
    expect(evaluateFilter({ body: { type: { $regex: '.*' } } }, subjectOf({ body: charge }))).toEqual({
      matches: false,
      reason: 'body.type.$regex is not an operator',
    });
  });
});

describe(filterRuleError.name, () => {
  it.each<[string, unknown]>([
    ['no filter', null],
    [
      'a rule on each part',
      { body: { type: 'x' }, headers: { 'x-env': 'live' }, query: { v: '1' }, method: 'POST' },
    ],
    ['the documented example', { body: { type: { $startsWith: 'invoice.' } }, headers: { 'x-env': 'live' } }],
    ['any object body', { body: {} }],
    ['a scalar body', { body: false }],
    ['a literal with $ keys under $eq', { body: { a: { $eq: { $b: [1, { c: null }] } } } }],
    ['headers that must be missing', { headers: { 'x-a': { $exists: false } } }],
    ['all values of a query key', { query: { tag: ['a', 'b'] } }],
    ['a method that is not GET', { method: { $not: 'GET' } }],
    [
      'a Stripe path under $or, 10 levels deep',
      {
        body: {
          $or: [{ data: { object: { payment_method_details: { card: { brand: { $in: ['visa'] } } } } } }],
        },
      },
    ],
  ])('accepts %s', (_name, rule) => {
    expect(filterRuleError(rule)).toBeNull();
  });

  it.each<[string, unknown, string]>([
    ['a string', 'type=x', 'filter must be an object or null'],
    ['an array', [{ body: {} }], 'filter must be an object or null'],
    ['an empty rule', {}, 'filter must match on at least one of body, headers, query, method'],
    [
      'another part',
      { path: '/x' },
      'filter.path is not allowed: a filter matches on body, headers, query, method',
    ],
    [
      'an unknown operator',
      { body: { amount: { $regex: 'x' } } },
      'filter.body.amount.$regex is not an operator: use $eq, $neq, $in, $nin, $exists, $gt, $gte, $lt, $lte, $startsWith, $contains, $and, $or, $not',
    ],
    [
      '$gt of a boolean',
      { body: { amount: { $gt: true } } },
      'filter.body.amount.$gt must be a number or a string',
    ],
    [
      '$gte of null, deep down',
      { body: { data: { object: { amount: { $gte: null } } } } },
      'filter.body.data.object.amount.$gte must be a number or a string',
    ],
    [
      '$in of a string',
      { body: { $or: [{ a: 1 }, { b: 2 }, { c: { $in: 'x' } }] } },
      'filter.body.$or[2].c.$in must be a non-empty array',
    ],
    ['an empty $in', { body: { a: { $in: [] } } }, 'filter.body.a.$in must be a non-empty array'],
    [
      'an object in $nin',
      { body: { a: { $nin: [1, {}] } } },
      'filter.body.a.$nin[1] must be a string, a number, a boolean or null',
    ],
    ['an empty $or', { body: { $or: [] } }, 'filter.body.$or must be a non-empty array'],
    ['an object for $and', { body: { $and: { a: 1 } } }, 'filter.body.$and must be a non-empty array'],
    ['$exists of a string', { body: { a: { $exists: 'yes' } } }, 'filter.body.a.$exists must be a boolean'],
    [
      '$startsWith of a number',
      { body: { a: { $startsWith: 1 } } },
      'filter.body.a.$startsWith must be a string',
    ],
    [
      '$contains of an array',
      { body: { a: { $contains: ['x'] } } },
      'filter.body.a.$contains must be a string',
    ],
    [
      'a bad operand under $not',
      { body: { a: { $not: { $lt: {} } } } },
      'filter.body.a.$not.$lt must be a number or a string',
    ],
    [
      'operators mixed with keys',
      { body: { a: { $gt: 1, b: 2 } } },
      'filter.body.a mixes operators ($gt) with field names (b)',
    ],
    ['NaN', { body: { a: NaN } }, 'filter.body.a must be a JSON value'],
    ['undefined', { body: { a: undefined } }, 'filter.body.a must be a JSON value'],
    ['a Date', { body: { a: new Date(0) } }, 'filter.body.a must be a JSON value'],
    [
      'a function in a literal',
      { body: { a: { $eq: { b: [1, () => 1] } } } },
      'filter.body.a.$eq.b[1] must be a JSON value',
    ],
    [
      'an upper-case header name',
      { headers: { 'X-GitHub-Event': 'push' } },
      'filter.headers.X-GitHub-Event must be lower-case: header names are lower-case',
    ],
    [
      'an upper-case header name under $or',
      { headers: { $or: [{ 'X-A': '1' }] } },
      'filter.headers.$or[0].X-A must be lower-case: header names are lower-case',
    ],
    [
      'headers that are not an object',
      { headers: 'x-env' },
      'filter.headers must be an object of header names',
    ],
    [
      'an operator on all headers',
      { headers: { $exists: true } },
      'filter.headers.$exists is not allowed here: match header names, combined with $and, $or, $not',
    ],
    [
      'a number for a header',
      { headers: { 'x-a': 1 } },
      'filter.headers.x-a must be a string: header values are strings',
    ],
    [
      'an array for a header',
      { headers: { 'x-a': ['a'] } },
      'filter.headers.x-a must be a string: header values are strings',
    ],
    [
      'fields of a header',
      { headers: { 'x-a': { b: 'c' } } },
      'filter.headers.x-a cannot have fields: header values are strings',
    ],
    ['a query that is an array', { query: ['a'] }, 'filter.query must be an object of query parameter names'],
    [
      'a number for a query value',
      { query: { page: { $gt: 2 } } },
      'filter.query.page.$gt must be a string: query values are strings',
    ],
    [
      'a number among query values',
      { query: { tag: ['a', 1] } },
      'filter.query.tag[1] must be a string: query values are strings',
    ],
    [
      'a lower-case method',
      { method: 'post' },
      'filter.method must be upper-case: the method is an upper-case string',
    ],
    [
      'a lower-case method in $in',
      { method: { $in: ['GET', 'post'] } },
      'filter.method.$in[1] must be upper-case: the method is an upper-case string',
    ],
    [
      'methods as an array',
      { method: ['POST'] },
      'filter.method must be a string: the method is an upper-case string',
    ],
    [
      'fields of the method',
      { method: { verb: 'POST' } },
      'filter.method cannot have fields: the method is an upper-case string',
    ],
  ])('refuses %s', (_name, rule, message) => {
    expect(filterRuleError(rule)).toBe(message);
  });

  it.each<[string, string, string]>([
    [
      '__proto__ in the body',
      '{"body":{"data":{"__proto__":{"admin":true}}}}',
      'filter.body.data.__proto__ is not allowed: __proto__, constructor and prototype are reserved',
    ],
    [
      'constructor at the root',
      '{"constructor":{"body":1}}',
      'filter.constructor is not allowed: __proto__, constructor and prototype are reserved',
    ],
    [
      'constructor under $or',
      '{"body":{"$or":[{"constructor":1}]}}',
      'filter.body.$or[0].constructor is not allowed: __proto__, constructor and prototype are reserved',
    ],
    [
      'prototype in a literal',
      '{"body":{"a":{"$eq":{"prototype":1}}}}',
      'filter.body.a.$eq.prototype is not allowed: __proto__, constructor and prototype are reserved',
    ],
  ])('refuses the reserved key %s', (_name, json, message) => {
    expect(filterRuleError(JSON.parse(json))).toBe(message);
  });

  it('names the path from the given root', () => {
    expect(filterRuleError({ body: { a: { $gt: [] } } }, 'destinations[1].filter')).toBe(
      'destinations[1].filter.body.a.$gt must be a number or a string',
    );
  });

  it(`refuses nesting deeper than ${FILTER_LIMITS.maxDepth} levels, however deep`, () => {
    const message = 'filter.body.a.a.a.a.a.a.a.a.a is nested deeper than 10 levels';
    expect(filterRuleError(JSON.parse(nestedJson(FILTER_LIMITS.maxDepth - 1)))).toBeNull();
    expect(filterRuleError(JSON.parse(nestedJson(FILTER_LIMITS.maxDepth)))).toBe(message);
    expect(filterRuleError(JSON.parse(nestedJson(100_000)))).toBe(message);
    const deepArray = JSON.parse(`{"body":{"a":{"$eq":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`);
    expect(filterRuleError(deepArray)).toMatch(
      /^filter\.body\.a\.\$eq(\[0\])+ is nested deeper than 10 levels$/,
    );
  });

  it(`refuses arrays of more than ${FILTER_LIMITS.maxArrayItems} items, however long`, () => {
    const items = (count: number) => Array.from({ length: count }, (_, index) => index);
    expect(filterRuleError({ body: { a: { $in: items(FILTER_LIMITS.maxArrayItems) } } })).toBeNull();
    expect(filterRuleError({ body: { a: { $in: items(FILTER_LIMITS.maxArrayItems + 1) } } })).toBe(
      'filter.body.a.$in has more than 100 items',
    );
    const million = `[${'0,'.repeat(999_999)}0]`;
    expect(filterRuleError(JSON.parse(`{"body":{"a":{"$nin":${million}}}}`))).toBe(
      'filter.body.a.$nin has more than 100 items',
    );
    expect(filterRuleError(JSON.parse(`{"body":{"$or":${million}}}`))).toBe(
      'filter.body.$or has more than 100 items',
    );
    expect(filterRuleError(JSON.parse(`{"body":{"a":${million}}}`))).toBe(
      'filter.body.a has more than 100 items',
    );
  });

  it(`refuses more than ${FILTER_LIMITS.maxKeys} keys in all`, () => {
    const withKeys = (count: number) => ({
      body: Object.fromEntries(Array.from({ length: count }, (_, index) => [`k${index}`, 1])),
    });
    expect(filterRuleError(withKeys(FILTER_LIMITS.maxKeys - 1))).toBeNull();
    expect(filterRuleError(withKeys(FILTER_LIMITS.maxKeys))).toBe('filter has more than 200 keys');
  });

  it(`refuses more than ${FILTER_LIMITS.maxBytes} bytes of JSON`, () => {
    const withText = (length: number, char = 'x') => ({ body: { a: char.repeat(length) } });
    const largest = withText(FILTER_LIMITS.maxBytes - '{"body":{"a":""}}'.length);
    expect(Buffer.byteLength(JSON.stringify(largest))).toBe(FILTER_LIMITS.maxBytes);
    expect(filterRuleError(largest)).toBeNull();
    const message = 'filter is larger than 16384 bytes as JSON';
    expect(filterRuleError(withText(largest.body.a.length + 1))).toBe(message);
    expect(filterRuleError(withText(Math.floor(largest.body.a.length / 2) + 1, 'é'))).toBe(message);
    expect(filterRuleError(withText(largest.body.a.length - 1, '"'))).toBe(message);
    expect(filterRuleError(withText(10_000_000))).toBe(message);
    expect(filterRuleError({ body: { [`k${'x'.repeat(10_000_000)}`]: 1 } })).toBe(message);
  });

  it('answers a rule it cannot read with a message, not an exception', () => {
    const rule = {
      get body(): unknown {
        throw new TypeError('no');
      },
    };
    expect(filterRuleError(rule)).toBe('filter could not be read as JSON data');
  });
});
