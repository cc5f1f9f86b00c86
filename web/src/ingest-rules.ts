import type { Endpoint, InboundAuth, IngestRulesInput, Verification, VerificationProvider } from './types';

/**
 * The ingest rules form: a flat draft of an endpoint's verification, inbound auth and dedup, and the
 * PATCH body that sends only the rules the draft changes. Secrets are never in a draft made from the
 * endpoint (the API answers them masked): an empty secret keeps the stored one.
 */

/** The providers whose signature carries a timestamp checked against `tolerance_seconds`. */
export const TIMESTAMP_PROVIDERS: ReadonlySet<string> = new Set<VerificationProvider>([
  'stripe',
  'slack',
  'standard_webhooks',
]);

export const DEFAULT_TOLERANCE_SECONDS = 300;
export const DEFAULT_DEDUP_WINDOW_SECONDS = 86_400;

export type DedupKind = '' | 'provider' | 'header' | 'body';

export interface RulesDraft {
  /** '' for no signature check. */
  provider: VerificationProvider | '';
  /** '' keeps the stored secret. */
  secret: string;
  mode: 'flag' | 'enforce';
  tolerance: string;
  header: string;
  algorithm: NonNullable<Verification['algorithm']>;
  encoding: NonNullable<Verification['encoding']>;
  prefix: string;
  /** '' for no inbound auth. */
  auth: '' | 'basic' | 'header';
  /** The basic username, or the header's name. */
  authName: string;
  /** The basic password, or the header's value; '' keeps the stored one. */
  authSecret: string;
  /** '' for no dedup. */
  dedup: DedupKind;
  /** The header name or the body path of a `header` or `body` dedup key. */
  dedupField: string;
  dedupWindow: string;
}

export function draftOf(endpoint: Endpoint): RulesDraft {
  const { verification, inbound_auth: auth, dedup } = endpoint;
  const [kind, field] = dedupKeyParts(dedup?.key ?? '');
  return {
    provider: verification?.provider ?? '',
    secret: '',
    mode: verification?.mode ?? 'enforce',
    tolerance: String(verification?.tolerance_seconds ?? DEFAULT_TOLERANCE_SECONDS),
    header: verification?.header ?? '',
    algorithm: verification?.algorithm ?? 'sha256',
    encoding: verification?.encoding ?? 'hex',
    prefix: verification?.prefix ?? '',
    auth: auth?.type ?? '',
    authName: auth === null ? '' : credentialOf(auth).name,
    authSecret: '',
    dedup: kind,
    dedupField: field,
    dedupWindow: String(dedup?.window_seconds ?? DEFAULT_DEDUP_WINDOW_SECONDS),
  };
}

/** The basic username or the header's name, and the password or header value (answered masked). */
export function credentialOf(auth: InboundAuth): { name: string; secret: string } {
  return auth.type === 'basic'
    ? { name: auth.username, secret: auth.password }
    : { name: auth.name, secret: auth.value };
}

/** `header:x-id` → ['header', 'x-id']; `provider` → ['provider', '']; '' → ['', '']. */
export function dedupKeyParts(key: string): [DedupKind, string] {
  if (key === 'provider') return ['provider', ''];
  const colon = key.indexOf(':');
  const kind = key.slice(0, colon);
  return kind === 'header' || kind === 'body' ? [kind, key.slice(colon + 1)] : ['', ''];
}

/** A number field's value, or undefined when empty (the server's default applies). */
function numberOf(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}

/** Only the keys whose value is defined, so that the server's defaults apply to the others. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function verificationOf(draft: RulesDraft): IngestRulesInput['verification'] {
  const { provider } = draft;
  if (provider === '') return null;
  const hmac = provider === 'hmac';
  return defined({
    provider,
    mode: draft.mode,
    secret: draft.secret || undefined,
    tolerance_seconds: TIMESTAMP_PROVIDERS.has(provider) ? numberOf(draft.tolerance) : undefined,
    header: hmac ? draft.header.trim() : undefined,
    algorithm: hmac ? draft.algorithm : undefined,
    encoding: hmac ? draft.encoding : undefined,
    prefix: hmac ? draft.prefix || undefined : undefined,
  });
}

function inboundAuthOf(draft: RulesDraft): IngestRulesInput['inbound_auth'] {
  const secret = draft.authSecret || undefined;
  const name = draft.authName.trim();
  if (draft.auth === 'basic') return defined({ type: 'basic' as const, username: name, password: secret });
  if (draft.auth === 'header') return defined({ type: 'header' as const, name, value: secret });
  return null;
}

function dedupOf(draft: RulesDraft): IngestRulesInput['dedup'] {
  if (draft.dedup === '') return null;
  const key = draft.dedup === 'provider' ? 'provider' : `${draft.dedup}:${draft.dedupField.trim()}`;
  return defined({ key, window_seconds: numberOf(draft.dedupWindow) });
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The PATCH body: each rule the draft changes (null when it removes it); a typed secret is a change. */
export function changedRules(saved: Endpoint, draft: RulesDraft): IngestRulesInput {
  const before = draftOf(saved);
  const changes: IngestRulesInput = {};
  const verification = verificationOf(draft);
  if (!same(verification, verificationOf(before))) changes.verification = verification;
  const inboundAuth = inboundAuthOf(draft);
  if (!same(inboundAuth, inboundAuthOf(before))) changes.inbound_auth = inboundAuth;
  const dedup = dedupOf(draft);
  if (!same(dedup, dedupOf(before))) changes.dedup = dedup;
  return changes;
}
