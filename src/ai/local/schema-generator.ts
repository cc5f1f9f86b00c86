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
  const { InputData, jsonInputForTargetLanguage, quicktype } = await import('quicktype-core');
  const input = jsonInputForTargetLanguage('typescript');
  await input.addSource({ name: rootName, samples: [JSON.stringify(payload.value)] });
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
      schema = schema.replace(new RegExp(`\\b${name}\\b(?!\\s*:)`, 'g'), `${rootName}${name}`);
  }
  return schema;
}
