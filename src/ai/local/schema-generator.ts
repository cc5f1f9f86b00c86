import type { Payload } from './payload';

/** Global names a generated interface must not shadow. */
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

/** The JSON value with every array cut to its first SCHEMA_SAMPLE_ITEMS elements (depth already bounded). */
function sampled(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice(0, SCHEMA_SAMPLE_ITEMS).map(sampled);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, sampled(child)]));
}

/**
 * TypeScript interfaces inferred from the payload by quicktype: nested objects as named interfaces,
 * array element types merged from every element (fields missing from some become optional), `null`
 * unions. Strings stay strings (no date, enum or number-string guessing), so the sample type-checks.
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
    rendererOptions: { 'just-types': 'true', 'prefer-unions': 'true' },
    inferMaps: false,
    inferEnums: false,
    inferUuids: false,
    inferDateTimes: false,
    inferIntegerStrings: false,
    inferBooleanStrings: false,
  });
  let schema = `${result.lines.join('\n').trim()}\n`;
  for (const name of RESERVED) {
    if (name !== rootName)
      schema = schema.replace(
        new RegExp(`(?<![\\w$"])${name}\\b(?!\\??\\s*:|[\\w$ ]*")`, 'g'),
        `${rootName}${name}`,
      );
  }
  return schema;
}
