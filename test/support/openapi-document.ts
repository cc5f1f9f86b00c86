import { api, uniqueEmail } from './api-client';

/** The parts of an OpenAPI 3 schema object the tests read. */
export interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  example?: unknown;
  nullable?: boolean;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}

/** What a route asks of its caller (`x-access`, from the @Can decorator): a permission on one resource. */
export interface RouteAccess {
  permission: string;
  /** The weakest role that may call it: viewer, member, admin or owner. */
  role: string;
  resource: string;
  /** The path parameter naming the resource. */
  param: string;
}

export interface Operation {
  method: string;
  /** The OpenAPI path, e.g. `/api/endpoints/{id}/events/{eId}`. */
  path: string;
  parameters: Parameter[];
  /** The JSON request body schema, $ref resolved; absent when the operation takes no body. */
  body?: Schema;
  /** The documented response statuses. */
  statuses: string[];
  /** The JSON schema of its success answer, as documented ($ref kept); absent when it answers no JSON. */
  response?: Schema;
  /** Needs a bearer token. */
  isProtected: boolean;
  /** Answers text/event-stream. */
  isStream: boolean;
  /** Absent on routes that name no resource (lists, creations, the caller's own account). */
  access?: RouteAccess;
  label: string;
}

interface RawOperation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
  security?: Record<string, unknown>[];
  'x-access'?: RouteAccess;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, RawOperation>>;
  components: { schemas: Record<string, Schema> };
}

export async function loadOpenApi(baseUrl: string): Promise<OpenApiDocument> {
  const response = await api<OpenApiDocument>(baseUrl, 'GET', '/docs-json');
  if (response.status !== 200) throw new Error(`GET /docs-json answered ${response.status}`);
  return response.body;
}

function resolve(document: OpenApiDocument, schema: Schema): Schema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  const target = document.components.schemas[name];
  if (!target) throw new Error(`unresolvable schema reference ${schema.$ref}`);
  return resolve(document, target);
}

/** Every operation of the document, in document order. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, raw]) => {
      const body = raw.requestBody?.content?.['application/json']?.schema;
      const success = Object.entries(raw.responses ?? {}).find(([status]) => status.startsWith('2'));
      return {
        method: method.toUpperCase(),
        path,
        parameters: raw.parameters ?? [],
        body: body && resolve(document, body),
        statuses: Object.keys(raw.responses ?? {}),
        response: success?.[1].content?.['application/json']?.schema,
        isProtected: (raw.security ?? []).some((scheme) => 'bearer' in scheme),
        isStream: Object.keys(success?.[1].content ?? {}).includes('text/event-stream'),
        access: raw['x-access'],
        label: `${method.toUpperCase()} ${path}`,
      };
    }),
  );
}

/** Whether the schema, or any schema it holds at any depth, has the property. */
export function holdsProperty(
  document: OpenApiDocument,
  schema: Schema | undefined,
  property: string,
  seen = new Set<string>(),
): boolean {
  if (!schema) return false;
  if (schema.$ref) {
    if (seen.has(schema.$ref)) return false;
    seen.add(schema.$ref);
    return holdsProperty(document, resolve(document, schema), property, seen);
  }
  const children = [...Object.values(schema.properties ?? {}), ...(schema.allOf ?? [])];
  if (schema.items) children.push(schema.items);
  return (
    property in (schema.properties ?? {}) ||
    children.some((child) => holdsProperty(document, child, property, seen))
  );
}

/** The names of the path parameters, in order: `{id}`, `{eId}` → ['id', 'eId']. */
export function pathParameterNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
}

export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for the path parameter {${name}} of ${path}`);
    return encodeURIComponent(value);
  });
}

/** A value the schema accepts: its example, its first enum member, or the smallest of its type. */
export function validValue(schema: Schema): unknown {
  if (schema.example !== undefined) return schema.example;
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      if (schema.format === 'email') return uniqueEmail('openapi');
      // A time to come: what an expiry takes.
      if (schema.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
      return 'v'.repeat(Math.max(schema.minLength ?? 1, 1));
    case 'boolean':
      return true;
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'object':
      return {};
    case 'array':
      return [];
    default:
      throw new Error(`no valid value known for the schema ${JSON.stringify(schema)}`);
  }
}

/** A body with every documented property set to a valid value. */
export function validBody(schema: Schema): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(schema.properties ?? {}).map(([name, property]) => [name, validValue(property)]),
  );
}

/**
 * Where two documents differ, one line per differing value (`paths./api/x.get: ...`), so that a drift test
 * names what changed rather than printing two 100 KB documents.
 */
export function openApiDrift(running: unknown, committed: unknown, at = ''): string[] {
  if (JSON.stringify(running) === JSON.stringify(committed)) return [];
  const bothObjects = [running, committed].every(
    (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  );
  if (!bothObjects)
    return [`${at}: ${JSON.stringify(running)} in the running code, ${JSON.stringify(committed)} committed`];
  const [live, kept] = [running, committed] as Record<string, unknown>[];
  const keys = [...new Set([...Object.keys(live), ...Object.keys(kept)])];
  return keys.flatMap((key) => {
    const path = at ? `${at}.${key}` : key;
    if (!(key in kept)) return [`${path}: in the running code only`];
    if (!(key in live)) return [`${path}: in the committed document only`];
    return openApiDrift(live[key], kept[key], path);
  });
}
