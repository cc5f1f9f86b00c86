import { postgresText } from '../common/postgres-text';
import { REDACTED_PASSWORD, withoutUrlPassword } from '../common/url-password';

/** What a secret value becomes in an entry's `changes`. */
export const REDACTED = REDACTED_PASSWORD;
/** What an object or array nested deeper than MAX_DEPTH becomes: cut, never walked. */
export const TOO_DEEP = '[nested too deep]';

/**
 * The most an entry's `changes` holds, as JSON: every request body the API takes is far smaller (a
 * destination with a full filter rule is under 2 KB), so only a body sent to be large is summarised.
 */
export const MAX_CHANGES_BYTES = 16 * 1024;
/**
 * The deepest level walked (the body is level 0). The deepest body the API takes is a destination filter:
 * 10 levels of rule under `filter.body`.
 */
export const MAX_DEPTH = 16;
/** A summarised body names at most this many of its top-level keys, each cut to KEY_MAX_LENGTH. */
const MAX_SUMMARY_KEYS = 100;
const KEY_MAX_LENGTH = 100;

/** Keys whose value is a credential, wherever they are: `secret`, `password`, `refreshToken`, `api_key`, ... */
const SECRET_KEY = /secret|password|token|authori[sz]ation|api[\s_-]?key/i;
/** Objects whose `value` is a credential: inbound_auth `{type: "header", name, value}`. */
const SECRET_VALUE_HOLDERS = new Set(['inbound_auth']);

function isSecret(key: string, holder: string | undefined): boolean {
  return (
    SECRET_KEY.test(key) || (key === 'value' && holder !== undefined && SECRET_VALUE_HOLDERS.has(holder))
  );
}

/**
 * The value with every secret replaced by REDACTED, at any depth, and the password of every URL. A null
 * secret stays null: it holds no secret, and says that one was removed. Text that jsonb refuses (`\u0000`,
 * a lone surrogate) becomes U+FFFD, so that no body can keep its write out of the log.
 */
function redact(value: unknown, depth: number, holder: string | undefined): unknown {
  if (typeof value === 'string') return withoutUrlPassword(postgresText(value));
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item: unknown) => redact(item, depth + 1, holder));
  return redactObject(value, depth, holder);
}

function redactObject(object: object, depth: number, holder?: string): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(object).map(([key, child]: [string, unknown]) => [
      postgresText(key),
      isSecret(key, holder) && child !== null ? REDACTED : redact(child, depth + 1, key),
    ]),
  );
}

const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What an audit entry keeps of a request body: the body as sent, with secret values redacted, so that the
 * audit log never holds a secret. A body larger than MAX_CHANGES_BYTES once redacted is kept
 * as `{truncated: true, keys}` (its top-level keys); no body, or one that is not a JSON object (the
 * routes that take none ignore it), is `{}`.
 */
export function changesOf(body: unknown): Record<string, unknown> {
  if (!isJsonObject(body)) return {};
  const redacted = redactObject(body, 0);
  if (Buffer.byteLength(JSON.stringify(redacted)) <= MAX_CHANGES_BYTES) return redacted;
  const keys = Object.keys(body)
    .slice(0, MAX_SUMMARY_KEYS)
    .map((key) => postgresText(key.slice(0, KEY_MAX_LENGTH)));
  return { truncated: true, keys };
}
