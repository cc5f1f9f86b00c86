import {
  DEFAULT_TOLERANCE_SECONDS,
  HMAC_ALGORITHMS,
  HMAC_ENCODINGS,
  VERIFICATION_PROVIDERS,
  type VerificationRule,
} from './verification';

/** An endpoint's verification as stored: the rule without its secret (kept sealed apart). */
export type VerificationSettings = Omit<VerificationRule, 'secret'>;

/** An endpoint's inbound auth as stored: without the password or header value (kept sealed apart). */
export type InboundAuthSettings = { type: 'basic'; username: string } | { type: 'header'; name: string };

export interface DedupSettings {
  /** `provider`, `header:<name>` or `body:<dot.path>`. */
  key: string;
  window_seconds: number;
}

/** The rules as the API takes them: each with its secret in plain text. */
export type VerificationInput = VerificationSettings & { secret?: string };
export type InboundAuthInput =
  { type: 'basic'; username: string; password?: string } | { type: 'header'; name: string; value?: string };

export const DEDUP_WINDOW_MAX_SECONDS = 604_800;
export const DEDUP_WINDOW_DEFAULT_SECONDS = 86_400;
export const TOLERANCE_MAX_SECONDS = 86_400;
const SECRET_MAX_LENGTH = 1024;
const NAME_MAX_LENGTH = 256;
/** RFC 9110 token characters: what a header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** Header names a provider or the HTTP layer owns: an inbound auth or dedup header may not be one of them. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);

/** The providers whose deliveries carry an id `dedup.key: "provider"` uses. */
export const PROVIDER_DEDUP_IDS: Partial<Record<VerificationRule['provider'], string>> = {
  stripe: 'body:id',
  github: 'header:x-github-delivery',
  shopify: 'header:x-shopify-webhook-id',
  slack: 'body:event_id',
  standard_webhooks: 'header:webhook-id',
};

/** Secrets shorter than this are answered as "••••" alone: their last 4 characters would be too much of them. */
const MASK_SHOWS_FROM_LENGTH = 12;

/** A rule secret as responses show it: never the secret, at most its last 4 characters. */
export function maskSecret(secret: string): string {
  return secret.length < MASK_SHOWS_FROM_LENGTH ? '••••' : `••••${secret.slice(-4)}`;
}

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The first key of `value` that is not among `allowed`, as a message; null when there is none. */
function unknownField(value: Fields, field: string, allowed: readonly string[]): string | null {
  const extra = Object.keys(value).find((key) => !allowed.includes(key));
  return extra === undefined ? null : `${field}.${extra} is not a field of ${field}`;
}

function stringError(value: unknown, path: string, maxLength: number): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength)
    return `${path} must be a string of 1 to ${maxLength} characters`;
  return null;
}

function headerNameError(value: unknown, path: string): string | null {
  if (typeof value !== 'string' || !HEADER_NAME.test(value) || value.length > NAME_MAX_LENGTH)
    return `${path} must be a lower-case header name, e.g. x-webhook-token`;
  if (RESERVED_HEADERS.has(value)) return `${path} cannot be ${value}`;
  return null;
}

function oneOfError(value: unknown, path: string, allowed: readonly string[]): string | null {
  return allowed.includes(value as string) ? null : `${path} must be one of ${allowed.join(', ')}`;
}

/** An optional secret: absent (the stored one is kept) or a string of 1 to 1024 characters. */
function secretError(value: unknown, path: string): string | null {
  return value === undefined ? null : stringError(value, path, SECRET_MAX_LENGTH);
}

/** Null when `value` is a valid `verification` (null included); else a message naming the field. */
export function verificationError(value: unknown): string | null {
  if (value === null) return null;
  if (!isObject(value)) return 'verification must be null or an object';
  const extra = unknownField(value, 'verification', [
    'provider',
    'secret',
    'mode',
    'tolerance_seconds',
    'header',
    'algorithm',
    'encoding',
    'prefix',
  ]);
  if (extra !== null) return extra;
  const hmac = value.provider === 'hmac';
  const hmacOnly = ['header', 'algorithm', 'encoding', 'prefix'].find(
    (field) => !hmac && value[field] !== undefined,
  );
  const tolerance = value.tolerance_seconds;
  return (
    oneOfError(value.provider, 'verification.provider', VERIFICATION_PROVIDERS) ??
    secretError(value.secret, 'verification.secret') ??
    (value.mode === undefined ? null : oneOfError(value.mode, 'verification.mode', ['flag', 'enforce'])) ??
    (tolerance === undefined ||
    (Number.isInteger(tolerance) &&
      (tolerance as number) >= 1 &&
      (tolerance as number) <= TOLERANCE_MAX_SECONDS)
      ? null
      : `verification.tolerance_seconds must be a whole number from 1 to ${TOLERANCE_MAX_SECONDS}`) ??
    (hmacOnly === undefined ? null : `verification.${hmacOnly} is only for the hmac provider`) ??
    (hmac ? headerNameError(value.header, 'verification.header') : null) ??
    (value.algorithm === undefined
      ? null
      : oneOfError(value.algorithm, 'verification.algorithm', HMAC_ALGORITHMS)) ??
    (value.encoding === undefined
      ? null
      : oneOfError(value.encoding, 'verification.encoding', HMAC_ENCODINGS)) ??
    (value.prefix === undefined ? null : stringError(value.prefix, 'verification.prefix', 64))
  );
}

/** Null when `value` is a valid `inbound_auth` (null included); else a message naming the field. */
export function inboundAuthError(value: unknown): string | null {
  if (value === null) return null;
  if (!isObject(value)) return 'inbound_auth must be null or an object';
  if (value.type === 'basic')
    return (
      unknownField(value, 'inbound_auth', ['type', 'username', 'password']) ??
      stringError(value.username, 'inbound_auth.username', NAME_MAX_LENGTH) ??
      ((value.username as string).includes(':') ? 'inbound_auth.username cannot contain ":"' : null) ??
      secretError(value.password, 'inbound_auth.password')
    );
  if (value.type === 'header')
    return (
      unknownField(value, 'inbound_auth', ['type', 'name', 'value']) ??
      headerNameError(value.name, 'inbound_auth.name') ??
      secretError(value.value, 'inbound_auth.value')
    );
  return 'inbound_auth.type must be one of basic, header';
}

const DOT_PATH = /^[^.\s]+(\.[^.\s]+)*$/;

/** Null when `value` is a valid `dedup` (null included); else a message naming the field. */
export function dedupError(value: unknown): string | null {
  if (value === null) return null;
  if (!isObject(value)) return 'dedup must be null or an object';
  const window = value.window_seconds;
  const key = value.key;
  const keyValid =
    key === 'provider' ||
    (typeof key === 'string' && key.startsWith('header:') && headerNameError(key.slice(7), 'x') === null) ||
    (typeof key === 'string' && key.startsWith('body:') && key.length <= 300 && DOT_PATH.test(key.slice(5)));
  return (
    unknownField(value, 'dedup', ['key', 'window_seconds']) ??
    (keyValid ? null : 'dedup.key must be "provider", "header:<lower-case name>" or "body:<dot.path>"') ??
    (window === undefined ||
    (Number.isInteger(window) && (window as number) >= 1 && (window as number) <= DEDUP_WINDOW_MAX_SECONDS)
      ? null
      : `dedup.window_seconds must be a whole number from 1 to ${DEDUP_WINDOW_MAX_SECONDS}`)
  );
}

/** The verification as stored, with the defaults filled in, and its secret. */
export function verificationSettingsOf(input: VerificationInput): VerificationSettings {
  const { provider, mode = 'enforce', tolerance_seconds = DEFAULT_TOLERANCE_SECONDS } = input;
  if (provider !== 'hmac') return { provider, mode, tolerance_seconds };
  const { header, algorithm = 'sha256', encoding = 'hex', prefix } = input;
  return { provider, mode, header, algorithm, encoding, ...(prefix === undefined ? {} : { prefix }) };
}

export function inboundAuthSettingsOf(input: InboundAuthInput): InboundAuthSettings {
  return input.type === 'basic'
    ? { type: 'basic', username: input.username }
    : { type: 'header', name: input.name };
}

export function inboundAuthSecretOf(input: InboundAuthInput): string | undefined {
  return input.type === 'basic' ? input.password : input.value;
}

export function dedupSettingsOf(input: DedupSettings): DedupSettings {
  return { key: input.key, window_seconds: input.window_seconds ?? DEDUP_WINDOW_DEFAULT_SECONDS };
}

/** Where `dedup.key` reads the id: `header:<name>` or `body:<path>` (for `provider`, the provider's own). */
export function dedupSourceOf(
  key: string,
  provider: VerificationRule['provider'] | undefined,
): string | null {
  if (key !== 'provider') return key;
  return provider === undefined ? null : (PROVIDER_DEDUP_IDS[provider] ?? null);
}
