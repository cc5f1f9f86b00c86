/**
 * Destination filters: a Hookdeck-style JSON rule deciding, when a webhook is captured, whether a destination
 * gets it. A rule matches on `method`, `headers`, `query` and `body` (all those given must match); under each,
 * a match is a JSON value (equality), a plain object (its keys must match the value's, other keys ignored) or an
 * operator object (`$eq $neq $in $nin $exists $gt $gte $lt $lte $startsWith $contains $and $or $not`).
 *
 * Arrays: a scalar (alone, under `$eq` or `$in`) matches an array that has it as an element, `$neq` and `$nin`
 * hold when no element is excluded, a plain object matches an array that has a matching object element (as in
 * Hookdeck), a literal array equals element-wise; `$gt $gte $lt $lte $startsWith` never match an array. A
 * header sent several times (string[]) matches when one of its values matches the whole rule under its name
 * (`$neq` and `$not` included). Header, query and method values are strings: a rule that compares them with
 * anything else, or a method with a lower-case string, is refused rather than left never to match.
 *
 * Validation (`filterRuleError`) runs when a filter is saved; evaluation (`evaluateFilter`) runs on the capture
 * path, on validated rules only, and costs microseconds: it builds its reason only when the rule fails.
 */

export type FilterRule = Record<string, unknown>;

export interface FilterInput {
  /** Upper-case. */
  method: string;
  /** Lower-case names; a value is string[] when the header was sent several times. */
  headers: Record<string, string | string[] | undefined>;
  /** The raw query string, without "?". */
  query: string;
  /** Raw bytes; parsed as JSON only if a rule matches on `body`. */
  body: Buffer;
}

/** A request as filters see it: built once per request, shared by the filters of all its destinations. */
export class FilterSubject {
  readonly method: string;
  readonly headers: FilterInput['headers'];
  private readonly rawQuery: string;
  private readonly rawBody: Buffer;
  private parsedQuery?: Record<string, string | string[]>;
  private parsedBody?: { value: unknown };

  constructor(input: FilterInput) {
    this.method = input.method;
    this.headers = input.headers;
    this.rawQuery = input.query;
    this.rawBody = input.body;
  }

  /** The body parsed as JSON, on first use; undefined when it is empty or not JSON. */
  get body(): unknown {
    this.parsedBody ??= { value: parseJson(this.rawBody) };
    return this.parsedBody.value;
  }

  /** The query string as an object without prototype, on first use: a repeated key has an array of its values. */
  get query(): Record<string, string | string[]> {
    this.parsedQuery ??= parseQuery(this.rawQuery);
    return this.parsedQuery;
  }
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

function parseQuery(query: string): Record<string, string | string[]> {
  const parsed: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(query)) {
    const earlier = parsed[key];
    if (earlier === undefined) parsed[key] = value;
    else if (Array.isArray(earlier)) earlier.push(value);
    else parsed[key] = [earlier, value];
  }
  return parsed;
}

/**
 * What a rule may be. `maxDepth` counts the levels of objects and arrays, the rule itself being the first: 10
 * rather than 8 lets a Stripe rule such as `body.data.object.payment_method_details.card.brand.$in` (8 levels)
 * sit under one `$or` (2 more). The others keep validation and evaluation small whatever a client sends;
 * `maxBytes` is the rule's size as compact JSON (UTF-8), measured while it is walked.
 */
export const FILTER_LIMITS = { maxDepth: 10, maxArrayItems: 100, maxKeys: 200, maxBytes: 16384 } as const;

/** What a rule's operand must be, or a literal's leaf. */
type ScalarKind = keyof typeof SCALAR_KINDS;

const SCALAR_KINDS = {
  json: { text: 'a JSON value', test: isJsonScalar },
  scalar: { text: 'a string, a number, a boolean or null', test: isJsonScalar },
  comparable: {
    text: 'a number or a string',
    test: (value: unknown) => typeof value === 'string' || isFiniteNumber(value),
  },
  string: { text: 'a string', test: (value: unknown) => typeof value === 'string' },
  boolean: { text: 'a boolean', test: (value: unknown) => typeof value === 'boolean' },
};

interface Operator {
  /** What the operand must be: any literal of the scope, a non-empty array of scalars, or a scalar. */
  readonly operand: 'literal' | 'list' | 'boolean' | 'comparable' | 'string';
  /** Whether the value passes. */
  test(value: unknown, operand: unknown): boolean;
  /** Why it does not, after `<path> is <value>, `. */
  explain(operand: unknown, value: unknown): string;
}

const EQUALS: Operator = {
  operand: 'literal',
  test: equals,
  explain: (operand, value) =>
    `${Array.isArray(value) && !isObjectLike(operand) ? 'which does not contain' : 'not'} ${preview(operand)}`,
};

function comparison(symbol: string, holds: (sign: number) => boolean): Operator {
  return {
    operand: 'comparable',
    test: (value, operand) => holds(compare(value, operand)),
    explain: (operand) => `not ${symbol} ${preview(operand)}`,
  };
}

/** The value operators; `$and`, `$or` and `$not` combine matches instead. */
const OPERATORS: ReadonlyMap<string, Operator> = new Map<string, Operator>([
  ['$eq', EQUALS],
  [
    '$neq',
    {
      operand: 'literal',
      test: (value, operand) => !equals(value, operand),
      explain: (operand) => `which $neq ${preview(operand)} excludes`,
    },
  ],
  [
    '$in',
    {
      operand: 'list',
      test: (value, operand) => isIn(value, operand as unknown[]),
      explain: (operand) => `not one of ${preview(operand)}`,
    },
  ],
  [
    '$nin',
    {
      operand: 'list',
      test: (value, operand) => !isIn(value, operand as unknown[]),
      explain: (operand) => `one of the excluded ${preview(operand)}`,
    },
  ],
  [
    '$exists',
    {
      operand: 'boolean',
      test: (value, operand) => (value !== undefined) === operand,
      explain: () => 'but $exists is false',
    },
  ],
  ['$gt', comparison('>', (sign) => sign > 0)],
  ['$gte', comparison('>=', (sign) => sign >= 0)],
  ['$lt', comparison('<', (sign) => sign < 0)],
  ['$lte', comparison('<=', (sign) => sign <= 0)],
  [
    '$startsWith',
    {
      operand: 'string',
      test: (value, operand) => typeof value === 'string' && value.startsWith(operand as string),
      explain: (operand) => `which does not start with ${preview(operand)}`,
    },
  ],
  [
    '$contains',
    {
      operand: 'string',
      test: (value, operand) =>
        typeof value === 'string'
          ? value.includes(operand as string)
          : Array.isArray(value) && value.includes(operand),
      explain: (operand) => `which does not contain ${preview(operand)}`,
    },
  ],
]);

const COMBINATORS = ['$and', '$or', '$not'];
const OPERATOR_NAMES = [...OPERATORS.keys(), ...COMBINATORS].join(', ');

// ---------------------------------------------------------------------------------------------------------------
// Validation

/** What a match may hold where it sits. */
interface Scope {
  /** What tests compare: any JSON value, strings only, or nothing (the level takes names and combinators). */
  readonly values: 'json' | 'strings' | 'none';
  /** Whether a literal array may be matched. */
  readonly arrays: boolean;
  /** The scope of the matches under plain keys; absent when the value has no fields. */
  readonly fields?: Scope;
  /** Plain keys are header names, lower-case. */
  readonly lowerCaseKeys?: boolean;
  /** Strings are upper-case (the method). */
  readonly upperCase?: boolean;
  /** For messages: why strings only, or (`values: 'none'`) what the keys name. */
  readonly note: string;
}

const BODY: Scope = {
  values: 'json',
  arrays: true,
  note: '',
  get fields() {
    return BODY;
  },
};
const SCOPES: ReadonlyMap<string, Scope> = new Map<string, Scope>([
  ['body', BODY],
  [
    'headers',
    {
      values: 'none',
      arrays: false,
      lowerCaseKeys: true,
      note: 'header names',
      fields: { values: 'strings', arrays: false, note: 'header values are strings' },
    },
  ],
  [
    'query',
    {
      values: 'none',
      arrays: false,
      note: 'query parameter names',
      fields: { values: 'strings', arrays: true, note: 'query values are strings' },
    },
  ],
  [
    'method',
    { values: 'strings', arrays: false, upperCase: true, note: 'the method is an upper-case string' },
  ],
]);
const SOURCE_NAMES = [...SCOPES.keys()].join(', ');

/** Keys that could reach an object's prototype if a rule were ever merged or copied naively. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Why a rule is refused; thrown inside validation only. */
class RuleError extends Error {}

/**
 * Null when `rule` is a valid filter (or null: no filter); else what is wrong, naming the path from `root`, e.g.
 * `filter.body.amount.$gt must be a number or a string`. Bounded work whatever it is given: the walk stops at
 * the first level past `FILTER_LIMITS.maxDepth`, an array over `maxArrayItems` is refused before its items are
 * read, and the size is added up as it goes. Never throws.
 */
export function filterRuleError(rule: unknown, root = 'filter'): string | null {
  if (rule === null) return null;
  try {
    new RuleValidator(root).rule(rule);
    return null;
  } catch (error) {
    return error instanceof RuleError ? error.message : `${root} could not be read as JSON data`;
  }
}

/** Walks a rule once, recursing no deeper than the depth limit, counting its keys and bytes. */
class RuleValidator {
  private keys = 0;
  private bytes = 0;

  constructor(private readonly root: string) {}

  rule(rule: unknown): void {
    if (!isPlainObject(rule)) throw new RuleError(`${this.root} must be an object or null`);
    const sources = this.object(rule, this.root, 1);
    if (sources.length === 0)
      throw new RuleError(`${this.root} must match on at least one of ${SOURCE_NAMES}`);
    for (const source of sources) {
      const scope = SCOPES.get(source);
      const path = `${this.root}.${source}`;
      if (scope === undefined)
        throw new RuleError(`${path} is not allowed: a filter matches on ${SOURCE_NAMES}`);
      this.match(rule[source], path, 2, scope);
    }
  }

  /** A match at `depth` (the level it has if it is an object or array). */
  private match(match: unknown, path: string, depth: number, scope: Scope): void {
    if (!isPlainObject(match)) {
      if (scope.values === 'none') throw new RuleError(`${path} must be an object of ${scope.note}`);
      return this.literal(match, path, depth, scope);
    }
    const keys = this.object(match, path, depth);
    const operators = keys.filter((key) => key.startsWith('$'));
    if (operators.length === 0) return this.fields(match, keys, path, depth, scope);
    const field = keys.find((key) => !key.startsWith('$'));
    if (field !== undefined)
      throw new RuleError(`${path} mixes operators (${operators[0]}) with field names (${field})`);
    for (const name of operators) this.operator(name, match[name], `${path}.${name}`, depth + 1, scope);
  }

  private fields(
    match: Record<string, unknown>,
    keys: string[],
    path: string,
    depth: number,
    scope: Scope,
  ): void {
    if (scope.fields === undefined) throw new RuleError(`${path} cannot have fields: ${scope.note}`);
    for (const key of keys) {
      if (scope.lowerCaseKeys && key !== key.toLowerCase())
        throw new RuleError(`${path}.${key} must be lower-case: header names are lower-case`);
      this.match(match[key], `${path}.${key}`, depth + 1, scope.fields);
    }
  }

  private operator(name: string, operand: unknown, path: string, depth: number, scope: Scope): void {
    if (name === '$and' || name === '$or') {
      for (const [index, item] of this.list(operand, path, depth).entries())
        this.match(item, `${path}[${index}]`, depth + 1, scope);
      return;
    }
    if (name === '$not') return this.match(operand, path, depth, scope);
    const operator = OPERATORS.get(name);
    if (operator === undefined) throw new RuleError(`${path} is not an operator: use ${OPERATOR_NAMES}`);
    if (scope.values === 'none')
      throw new RuleError(`${path} is not allowed here: match ${scope.note}, combined with $and, $or, $not`);
    if (operator.operand === 'literal') return this.literal(operand, path, depth, scope);
    if (operator.operand !== 'list') return this.scalar(operand, path, operator.operand, scope);
    for (const [index, item] of this.list(operand, path, depth).entries())
      this.scalar(item, `${path}[${index}]`, 'scalar', scope);
  }

  /** A value compared as it is: any JSON (no reserved keys), or in a strings scope a string or strings. */
  private literal(value: unknown, path: string, depth: number, scope: Scope): void {
    if (Array.isArray(value) && scope.arrays) {
      for (const [index, item] of this.array(value, path, depth).entries()) {
        const itemPath = `${path}[${index}]`;
        if (scope.values === 'strings') this.scalar(item, itemPath, 'string', scope);
        else this.literal(item, itemPath, depth + 1, scope);
      }
    } else if (isPlainObject(value) && scope.values === 'json') {
      for (const key of this.object(value, path, depth))
        this.literal(value[key], `${path}.${key}`, depth + 1, scope);
    } else {
      this.scalar(value, path, 'json', scope);
    }
  }

  /** A non-empty array, such as `$in` or `$or` take. */
  private list(value: unknown, path: string, depth: number): unknown[] {
    if (!Array.isArray(value) || value.length === 0) throw new RuleError(`${path} must be a non-empty array`);
    return this.array(value, path, depth);
  }

  private scalar(value: unknown, path: string, kind: ScalarKind, scope: Scope): void {
    const onlyStrings = scope.values === 'strings' && kind !== 'boolean';
    const expected = SCALAR_KINDS[onlyStrings ? 'string' : kind];
    if (!expected.test(value))
      throw new RuleError(`${path} must be ${expected.text}${onlyStrings ? `: ${scope.note}` : ''}`);
    if (scope.upperCase && typeof value === 'string' && value !== value.toUpperCase())
      throw new RuleError(`${path} must be upper-case: ${scope.note}`);
    this.add(jsonBytes(value as string | number | boolean | null));
  }

  private array(value: unknown[], path: string, depth: number): unknown[] {
    this.level(path, depth);
    if (value.length > FILTER_LIMITS.maxArrayItems)
      throw new RuleError(`${path} has more than ${FILTER_LIMITS.maxArrayItems} items`);
    this.add(Math.max(value.length + 1, 2)); // brackets and commas
    return value;
  }

  /** Counts an object's keys and bytes, refusing reserved keys; returns its keys. */
  private object(value: Record<string, unknown>, path: string, depth: number): string[] {
    this.level(path, depth);
    const keys = Object.keys(value);
    this.keys += keys.length;
    if (this.keys > FILTER_LIMITS.maxKeys)
      throw new RuleError(`${this.root} has more than ${FILTER_LIMITS.maxKeys} keys`);
    this.add(Math.max(keys.length + 1, 2)); // braces and commas
    for (const key of keys) {
      if (RESERVED_KEYS.has(key))
        throw new RuleError(
          `${path}.${key} is not allowed: __proto__, constructor and prototype are reserved`,
        );
      this.add(jsonBytes(key) + 1); // and its colon
    }
    return keys;
  }

  private level(path: string, depth: number): void {
    if (depth > FILTER_LIMITS.maxDepth)
      throw new RuleError(`${path} is nested deeper than ${FILTER_LIMITS.maxDepth} levels`);
  }

  private add(bytes: number): void {
    this.bytes += bytes;
    if (this.bytes > FILTER_LIMITS.maxBytes)
      throw new RuleError(`${this.root} is larger than ${FILTER_LIMITS.maxBytes} bytes as JSON`);
  }
}

/** A scalar's or key's size in compact JSON, in UTF-8 bytes (a string past the limit is not measured exactly). */
function jsonBytes(value: string | number | boolean | null): number {
  if (typeof value !== 'string') return String(value).length;
  return value.length > FILTER_LIMITS.maxBytes ? value.length : Buffer.byteLength(JSON.stringify(value));
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isJsonScalar(value: unknown): boolean {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || isFiniteNumber(value);
}

/** An object as JSON.parse makes them (not an array, a class instance, a Date...). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isObject(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

// ---------------------------------------------------------------------------------------------------------------
// Evaluation

export interface FilterVerdict {
  matches: boolean;
  /** Why not, for the dashboard, e.g. `body.type is "charge.failed", not "invoice.paid"`; null when it matches. */
  reason: string | null;
}

/** Why a match fails, or null when it holds. */
type Reason = string | null;

/** How a plain-key match reads the fields of a value. */
type FieldsMatcher = (
  value: unknown,
  fields: Record<string, unknown>,
  path: string,
  explain: boolean,
) => Reason;

/** The reason of the first, fast pass, which does not say why: a failing rule is run again to explain. */
const NO_MATCH = 'no match';

/** Cheapest first: a rule that fails on the method never parses the body. */
const SOURCE_ORDER = ['method', 'headers', 'query', 'body'] as const;

/** Whether the request matches a rule that `filterRuleError` accepts, and why not. */
export function evaluateFilter(rule: FilterRule, subject: FilterSubject): FilterVerdict {
  if (evaluate(rule, subject, false) === null) return { matches: true, reason: null };
  return { matches: false, reason: evaluate(rule, subject, true) };
}

function evaluate(rule: FilterRule, subject: FilterSubject, explain: boolean): Reason {
  return every(
    SOURCE_ORDER.filter((source) => Object.hasOwn(rule, source)),
    (source) =>
      source === 'headers'
        ? matchValue(subject.headers, rule.headers, source, explain, matchHeaderFields)
        : matchValue(subject[source], rule[source], source, explain),
  );
}

/** `explain` false: a failure is NO_MATCH, no text built. */
function matchValue(
  value: unknown,
  match: unknown,
  path: string,
  explain: boolean,
  fields: FieldsMatcher = matchFields,
): Reason {
  if (!isObject(match)) return applyOperator(EQUALS, value, match, path, explain);
  const keys = Object.keys(match);
  if (keys.length === 0 || !keys[0].startsWith('$')) return fields(value, match, path, explain);
  return every(keys, (name) => matchOperator(name, value, match[name], path, explain, fields));
}

function matchOperator(
  name: string,
  value: unknown,
  operand: unknown,
  path: string,
  explain: boolean,
  fields: FieldsMatcher,
): Reason {
  const rules = operand as unknown[];
  switch (name) {
    case '$and':
      return every(rules, (rule) => matchValue(value, rule, path, explain, fields));
    case '$or':
      return some(rules, (rule) => matchValue(value, rule, path, explain, fields), explain, 'alternatives');
    case '$not':
      if (matchValue(value, operand, path, false, fields) !== null) return null;
      return explain ? `the rule under ${path}.$not matched` : NO_MATCH;
    default: {
      const operator = OPERATORS.get(name);
      if (operator !== undefined) return applyOperator(operator, value, operand, path, explain);
      return explain ? `${path}.${name} is not an operator` : NO_MATCH;
    }
  }
}

function applyOperator(
  operator: Operator,
  value: unknown,
  operand: unknown,
  path: string,
  explain: boolean,
): Reason {
  if (operator.test(value, operand)) return null;
  if (!explain) return NO_MATCH;
  return value === undefined
    ? `${path} is missing`
    : `${path} is ${preview(value)}, ${operator.explain(operand, value)}`;
}

/** Plain keys on a JSON value: an object whose fields match, or an array with such an object. */
function matchFields(
  value: unknown,
  fields: Record<string, unknown>,
  path: string,
  explain: boolean,
): Reason {
  if (!Array.isArray(value)) return matchObject(value, fields, path, explain, false);
  return some(
    value,
    (item, index) => matchObject(item, fields, `${path}[${index}]`, explain, false),
    explain,
    `elements of ${path}`,
  );
}

/** Header names: a header sent several times matches when one of its values does. */
function matchHeaderFields(
  value: unknown,
  fields: Record<string, unknown>,
  path: string,
  explain: boolean,
): Reason {
  return matchObject(value, fields, path, explain, true);
}

function matchObject(
  value: unknown,
  fields: Record<string, unknown>,
  path: string,
  explain: boolean,
  multiValued: boolean,
): Reason {
  if (!isObject(value)) {
    if (!explain) return NO_MATCH;
    return value === undefined ? `${path} is missing` : `${path} is ${preview(value)}, not an object`;
  }
  return every(Object.keys(fields), (key) => {
    const field = Object.hasOwn(value, key) ? value[key] : undefined;
    const fieldPath = `${path}.${key}`;
    if (!multiValued || !Array.isArray(field)) return matchValue(field, fields[key], fieldPath, explain);
    return some(
      field,
      (item, index) => matchValue(item, fields[key], `${fieldPath}[${index}]`, explain),
      explain,
      `values of ${fieldPath}`,
    );
  });
}

/** The first item's reason for failing; null when every item passes. */
function every<T>(items: readonly T[], check: (item: T) => Reason): Reason {
  for (const item of items) {
    const reason = check(item);
    if (reason !== null) return reason;
  }
  return null;
}

/** Null when one item passes; else that none of the `what` did, with the first one's reason. */
function some<T>(
  items: readonly T[],
  check: (item: T, index: number) => Reason,
  explain: boolean,
  what: string,
): Reason {
  let first: Reason = null;
  for (const [index, item] of items.entries()) {
    const reason = check(item, index);
    if (reason === null) return null;
    first ??= reason;
  }
  if (!explain) return NO_MATCH;
  return first === null ? `there are no ${what}` : `none of the ${what} matched (first: ${first})`;
}

/** `$eq`: deep equality; a scalar also equals an array that has it as an element. */
function equals(value: unknown, operand: unknown): boolean {
  return Array.isArray(value) && !isObjectLike(operand) ? value.includes(operand) : deepEqual(value, operand);
}

/** Recurses along `operand` (a validated rule's, so of bounded depth), never further into the value. */
function deepEqual(value: unknown, operand: unknown): boolean {
  if (value === operand) return true;
  if (Array.isArray(operand))
    return (
      Array.isArray(value) &&
      value.length === operand.length &&
      operand.every((item, index) => deepEqual(value[index], item))
    );
  if (!isObject(operand) || !isObject(value)) return false;
  const keys = Object.keys(operand);
  return (
    keys.length === Object.keys(value).length &&
    keys.every((key) => Object.hasOwn(value, key) && deepEqual(value[key], operand[key]))
  );
}

function isIn(value: unknown, list: unknown[]): boolean {
  return Array.isArray(value) ? value.some((item) => list.includes(item)) : list.includes(value);
}

/** Above 0 when value > operand, 0 when equal, below 0 when less; NaN unless both are numbers or both strings. */
function compare(value: unknown, operand: unknown): number {
  if (typeof value === 'number' && typeof operand === 'number') return value - operand;
  if (typeof value === 'string' && typeof operand === 'string')
    return value < operand ? -1 : value > operand ? 1 : 0;
  return NaN;
}

function isObjectLike(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return isObjectLike(value) && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------------------------
// Reasons

const PREVIEW_LENGTH = 60;

/** A value as JSON for a reason, cut at PREVIEW_LENGTH characters (reading no more of a large or deep value). */
function preview(value: unknown): string {
  const text = previewText(value, PREVIEW_LENGTH + 1);
  return text.length > PREVIEW_LENGTH ? `${text.slice(0, PREVIEW_LENGTH)}…` : text;
}

/** JSON text of `value`, stopped once it reaches `budget` characters; each level spends one, so depth is bounded. */
function previewText(value: unknown, budget: number): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, budget));
  if (!isObjectLike(value)) return String(value);
  const isArray = Array.isArray(value);
  let text = isArray ? '[' : '{';
  for (const [label, item] of entries(value)) {
    if (text.length >= budget) return text;
    text += `${text.length > 1 ? ',' : ''}${label}${previewText(item, budget - text.length)}`;
  }
  return text + (isArray ? ']' : '}');
}

/** An array's items or an object's own fields, each with its `"key":` label, lazily. */
function* entries(value: object): Generator<[string, unknown]> {
  if (Array.isArray(value)) {
    for (const item of value) yield ['', item];
    return;
  }
  for (const key in value)
    if (Object.hasOwn(value, key))
      yield [`${JSON.stringify(key.slice(0, PREVIEW_LENGTH))}:`, (value as Record<string, unknown>)[key]];
}
