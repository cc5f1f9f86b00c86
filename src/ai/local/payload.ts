import type { AiEvent } from '../ai.types';

export type Payload =
  | { kind: 'json'; value: unknown }
  | { kind: 'form'; fields: Record<string, string | string[]> }
  | { kind: 'text'; text: string }
  | { kind: 'binary'; size: number }
  | { kind: 'empty' };

export function header(event: AiEvent, name: string): string | undefined {
  const value = event.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** The body as the handler code will see it: JSON, a form, text, or opaque bytes. */
export function parsePayload(event: AiEvent): Payload {
  if (event.body.length === 0) return { kind: 'empty' };
  const contentType = header(event, 'content-type') ?? '';
  const text = event.body.toString('utf8');
  if (contentType.includes('application/x-www-form-urlencoded')) {
    const fields: Record<string, string | string[]> = {};
    for (const [key, value] of new URLSearchParams(text)) {
      const existing = fields[key];
      fields[key] = existing === undefined ? value : ([] as string[]).concat(existing, value);
    }
    return { kind: 'form', fields };
  }
  try {
    return { kind: 'json', value: JSON.parse(text) };
  } catch {
    return Buffer.from(text, 'utf8').equals(event.body)
      ? { kind: 'text', text }
      : { kind: 'binary', size: event.body.length };
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads a dotted path (`data.object.id`) of a JSON value. */
export function pick(value: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((current, key) => (isRecord(current) ? current[key] : undefined), value);
}

export function pickString(value: unknown, path: string): string | undefined {
  const found = pick(value, path);
  return typeof found === 'string' || typeof found === 'number' ? String(found) : undefined;
}
