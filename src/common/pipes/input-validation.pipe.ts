import { type ArgumentMetadata, BadRequestException, Injectable, ValidationPipe } from '@nestjs/common';

/** How deep a JSON body may nest: the body object is level 1, an object or array in it level 2, ... */
export const MAX_JSON_DEPTH = 32;

/** U+0000 (PostgreSQL text and jsonb cannot hold it) or a UTF-16 surrogate without its pair (not text). */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what this looks for
const UNSTORABLE_CHARACTER = /[\u0000\p{Cs}]/u;

interface Pending {
  value: unknown;
  /** The top-level field the value sits in, for the message ("" for the body itself). */
  field: string;
  depth: number;
}

/**
 * Why a request body or query cannot be taken (naming the field), or null. What it refuses is what
 * class-validator does not see: a body that is not a JSON object, nesting deeper than MAX_JSON_DEPTH
 * (the validators after it recurse, and would overflow the stack on a body nested thousands of levels
 * deep), text PostgreSQL cannot store, and a property named `constructor` at any depth (class-transformer,
 * which builds the DTOs, drops it silently: a filter on it would match every event). It walks with a
 * stack of its own, never recursing.
 */
export function unacceptableInput(value: unknown, kind: 'body' | 'query'): string | null {
  if (value === undefined) return null;
  if (kind === 'body' && (value === null || typeof value !== 'object' || Array.isArray(value)))
    return 'the body must be a JSON object';
  const pending: Pending[] = [{ value, field: '', depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: current, field, depth } = next;
    if (typeof current === 'string' && UNSTORABLE_CHARACTER.test(current))
      return `${field} must not contain NUL characters or unpaired surrogates`;
    if (current === null || typeof current !== 'object') continue;
    if (depth > MAX_JSON_DEPTH) return `${field} is nested more than ${MAX_JSON_DEPTH} levels deep`;
    for (const [key, child] of Object.entries(current)) {
      if (UNSTORABLE_CHARACTER.test(key))
        return `${field || 'the body'} has a property name with NUL characters or unpaired surrogates`;
      if (key === 'constructor')
        return `${field || 'the body'} has a property named constructor, which is not allowed`;
      pending.push({ value: child, field: field || key, depth: depth + 1 });
    }
  }
  return null;
}

/**
 * The global ValidationPipe (whitelist, unknown properties refused, DTOs built), after the checks of
 * `unacceptableInput` on bodies and queries: hostile input gets a 400 naming the field, never a 500.
 */
@Injectable()
export class InputValidationPipe extends ValidationPipe {
  constructor() {
    super({ whitelist: true, forbidNonWhitelisted: true, transform: true });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' || metadata.type === 'query') {
      const problem = unacceptableInput(value, metadata.type);
      if (problem) throw new BadRequestException([problem]);
    }
    return super.transform(value, metadata);
  }
}
