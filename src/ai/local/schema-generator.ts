import type { Payload } from './payload';

/** Global names a generated type must not shadow (such a type is renamed `<rootName><name>`). */
const RESERVED = [
  'Object',
  'Date',
  'Array',
  'String',
  'Number',
  'Boolean',
  'Function',
  'Error',
  'Map',
  'Set',
  'Promise',
  'Symbol',
  'Record',
  'Event',
  'Request',
  'Response',
];

/** `invoice.paid` from Stripe → `StripeInvoicePaidEvent`. */
export function rootTypeName(provider: string, eventType?: string): string {
  const words =
    `${provider.startsWith('a ') ? 'Webhook' : provider} ${eventType ?? ''} ${provider.startsWith('a ') ? 'Payload' : 'Event'}`
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean);
  const name = words.map((word) => word[0].toUpperCase() + word.slice(1)).join('');
  return /^[A-Za-z]/.test(name) ? name : `Webhook${name}`;
}

/**
 * JSON nested deeper than this is typed `unknown`: quicktype (and JSON.stringify before it) recurse once a
 * level, and a body nested some thousands of levels deep would overflow the stack.
 */
export const SCHEMA_MAX_DEPTH = 64;

/** Whether the JSON value nests objects or arrays more than `limit` levels deep (walked without recursion). */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [current, depth] = next;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * An array is typed from at most this many of its first elements: quicktype's work grows with the body
 * (a 3.3-MB array of 40,000 objects took 0.4 to 0.8 s of the API process's one thread), and a webhook's
 * long arrays repeat one shape.
 */
export const SCHEMA_SAMPLE_ITEMS = 1000;

/**
 * The JSON value with every array cut to its first SCHEMA_SAMPLE_ITEMS elements (depth already bounded), and
 * every object of more keys than that reduced to its first SCHEMA_SAMPLE_ITEMS values under the keys "0",
 * "1", ...: quicktype types an object whose keys are all digits as a map of its values' types (inferMaps),
 * `{ [key: string]: T }`. A webhook's record has tens of fields; an object of thousands of keys is keyed by
 * ids, and typed as a record quicktype's time grows faster than the square of its keys (150,000: 32 minutes).
 */
function sampled(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice(0, SCHEMA_SAMPLE_ITEMS).map(sampled);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  if (entries.length <= SCHEMA_SAMPLE_ITEMS)
    return Object.fromEntries(entries.map(([key, child]) => [key, sampled(child)]));
  return Object.fromEntries(
    entries.slice(0, SCHEMA_SAMPLE_ITEMS).map(([, child], index) => [String(index), sampled(child)]),
  );
}

/**
 * TypeScript interfaces inferred from the payload by quicktype: nested objects as named interfaces,
 * array element types merged from every element (fields missing from some become optional), `null`
 * unions, objects keyed by ids as maps (quicktype's own inference: all-digit keys, or many values of one
 * type under keys that do not read as field names; and every object of thousands of keys). Strings stay
 * strings (no date, enum or number-string guessing), so the sample type-checks.
 * quicktype is loaded on first use, like the TypeScript compiler (isTypeScriptDeclaration): about 20 MB.
 */
export async function generateSchema(payload: Payload, rootName: string): Promise<string> {
  if (payload.kind === 'form') {
    const fields = Object.entries(payload.fields).map(
      ([key, value]) =>
        `  ${/^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key)}: ${Array.isArray(value) ? 'string[]' : 'string'};`,
    );
    return `/** Form-encoded (application/x-www-form-urlencoded): every value is a string. */\nexport interface ${rootName} {\n${fields.join('\n')}\n}\n`;
  }
  if (payload.kind !== 'json') {
    return `/** The body is not JSON or a form (${payload.kind}): handle it as raw text or bytes. */\nexport type ${rootName} = string;\n`;
  }
  if (nestedDeeperThan(payload.value, SCHEMA_MAX_DEPTH)) {
    return `/** The body is JSON nested more than ${SCHEMA_MAX_DEPTH} levels deep: too deep to type here. */\nexport type ${rootName} = unknown;\n`;
  }
  const { InputData, jsonInputForTargetLanguage, quicktype } = await import('quicktype-core');
  const input = jsonInputForTargetLanguage('typescript');
  await input.addSource({ name: rootName, samples: [JSON.stringify(sampled(payload.value))] });
  const inputData = new InputData();
  inputData.addInput(input);
  const result = await quicktype({
    inputData,
    lang: 'typescript',
    // Not just the types: the Convert class quicktype writes after them names the body's own type.
    rendererOptions: { 'just-types': 'false', 'runtime-typecheck': 'false', 'prefer-unions': 'true' },
    inferMaps: true,
    inferEnums: false,
    inferUuids: false,
    inferDateTimes: false,
    inferIntegerStrings: false,
    inferBooleanStrings: false,
  });
  let schema = rootedTypes(result.lines, rootName);
  for (const name of RESERVED)
    if (name !== rootName && new RegExp(`^export (interface|type) ${name}\\b`, 'm').test(schema))
      schema = renamed(schema, name, `${rootName}${name}`);
  return schema;
}

/** The type `from` renamed `to` where it is used as a type: not a property named so (`Date?:`, `"Date"`). */
function renamed(schema: string, from: string, to: string): string {
  return schema.replace(new RegExp(`(?<![\\w$"])${from}\\b(?!\\??\\s*:|[\\w$ ]*")`, 'g'), to);
}

/**
 * quicktype's types, and `rootName` the type of the whole body. quicktype gives the top-level name to the
 * body's class, and when the body is not one (an array, a map, a string) to its elements' or values'
 * class (or to nothing): `Convert.toX(json)`, which it writes after the types, returns the body's type.
 * Then the elements' class is renamed `<rootName>Item`, and `rootName` declared as the body's type.
 */
function rootedTypes(lines: string[], rootName: string): string {
  const convert = lines.findIndex((line) => line.startsWith('export class Convert'));
  const bodyType = /^\s*public static to\w*\(json: string\): (.+) \{$/.exec(lines[convert + 1])?.[1];
  if (bodyType === undefined) throw new Error(`quicktype wrote no Convert class for ${rootName}`);
  // The types, without quicktype's usage comment before them and its comment on Convert after them.
  let types = lines
    .slice(0, convert)
    .filter((line) => !line.startsWith('//'))
    .join('\n')
    .trim();
  if (bodyType === rootName) return `${types}\n`;
  let item = `${rootName}Item`;
  while (new RegExp(`\\b${item}\\b`).test(types)) item += 'Type';
  types = renamed(types.replace(new RegExp(`^type ${rootName} = .*;$`, 'm'), '').trim(), rootName, item);
  return `export type ${rootName} = ${renamed(bodyType, rootName, item)};\n${types && `\n${types}\n`}`;
}
