import { createHash, timingSafeEqual } from 'node:crypto';
import { evaluateFilter, FilterSubject, type FilterRule } from './filter';
import { dedupSourceOf, type DedupSettings, type InboundAuthSettings } from './ingest-rules';
import { verifySignature, type SignedRequest, type VerificationRule } from './verification';

/** What a capture is judged by: an endpoint's ingest rules, opened (secrets in plain text) for the capture path. */
export interface CaptureRules {
  /** The endpoint's `rules_version` these were read at; the capture statement stores nothing judged by another. */
  version: number;
  verification: VerificationRule | null;
  /**
   * The value a capture must carry, and in which header; with a scheme, the value follows it (`Basic`, in
   * any case, as RFC 9110 §11.1 has it). null: none.
   */
  inboundAuth: { header: string; scheme: 'basic' | null; expected: Buffer } | null;
  /** Where the dedup key is read (`header:<name>` or `body:<path>`) and for how long it holds. */
  dedup: { source: string; windowMs: number } | null;
  /** The active destinations that have a filter. */
  filters: { destinationId: string; rule: FilterRule }[];
}

/** The rules of an endpoint that has never had any (its `rules_version` is still 0). */
export const NO_RULES: CaptureRules = {
  version: 0,
  verification: null,
  inboundAuth: null,
  dedup: null,
  filters: [],
};

/** An endpoint's rules as stored, their secrets opened. */
export interface StoredRules {
  version: number;
  verification: Omit<VerificationRule, 'secret'> | null;
  verificationSecret: string | null;
  inboundAuth: InboundAuthSettings | null;
  inboundAuthSecret: string | null;
  dedup: DedupSettings | null;
  filters: { destinationId: string; rule: FilterRule }[];
}

export function captureRulesOf(stored: StoredRules): CaptureRules {
  const { verification, inboundAuth, dedup } = stored;
  const source = dedup === null ? null : dedupSourceOf(dedup.key, verification?.provider);
  return {
    version: stored.version,
    verification:
      verification === null || stored.verificationSecret === null
        ? null
        : { ...verification, secret: stored.verificationSecret },
    inboundAuth:
      inboundAuth === null || stored.inboundAuthSecret === null
        ? null
        : inboundAuth.type === 'basic'
          ? {
              header: 'authorization',
              scheme: 'basic',
              expected: Buffer.from(
                Buffer.from(`${inboundAuth.username}:${stored.inboundAuthSecret}`).toString('base64'),
              ),
            }
          : { header: inboundAuth.name, scheme: null, expected: Buffer.from(stored.inboundAuthSecret) },
    dedup: source === null || dedup === null ? null : { source, windowMs: dedup.window_seconds * 1000 },
    filters: stored.filters,
  };
}

/** The request as the rules see it. */
export interface JudgedRequest extends SignedRequest {
  method: string;
  query: string;
}

export interface Verdict {
  /** False when inbound auth is on and the request lacks its credential: refused with 401, nothing stored. */
  authorized: boolean;
  verification: { status: 'verified' | 'failed' | 'none'; reason: string | null };
  /** False when enforced verification failed: stored for inspection, answered 401, never forwarded. */
  forward: boolean;
  /** The dedup key, when dedup is on, the request carries one and is not a failed verification. */
  dedupKey: string | null;
  /** Active destinations whose filter the event does not match: they get no delivery. */
  skip: string[];
}

/** The verdict on a request without the endpoint's inbound credential. */
const UNAUTHORIZED: Verdict = {
  authorized: false,
  verification: { status: 'none', reason: null },
  forward: false,
  dedupKey: null,
  skip: [],
};

/** The verdict on a capture to an endpoint that never had rules: the hot path's common case, made once. */
const UNJUDGED: Verdict = {
  authorized: true,
  verification: { status: 'none', reason: null },
  forward: true,
  dedupKey: null,
  skip: [],
};

/**
 * Dedup keys longer than this are kept as their SHA-256 (the key column stays small), as is one with a
 * NUL character (a JSON body may hold "\u0000"), which PostgreSQL's text cannot.
 */
const DEDUP_KEY_MAX_LENGTH = 200;

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function carriesCredential(rules: CaptureRules['inboundAuth'], request: JudgedRequest): boolean {
  if (rules === null) return true;
  const sent = firstValue(request.headers[rules.header]);
  if (sent === undefined) return false;
  const given = Buffer.from(rules.scheme === null ? sent : credentialsOf(sent, rules.scheme));
  return given.length === rules.expected.length && timingSafeEqual(given, rules.expected);
}

/** What follows the scheme in an `Authorization` value (`Basic dXNlcjpwYXNz`), or "" for another scheme. */
function credentialsOf(value: string, scheme: string): string {
  const space = value.indexOf(' ');
  if (space === -1 || value.slice(0, space).toLowerCase() !== scheme) return '';
  return value.slice(space + 1).trimStart();
}

/**
 * The headers stored with an event, and so shown, given to the AI and forwarded: all but the one that
 * carried the endpoint's inbound credential, a secret kept sealed like the rules' others.
 */
export function storedHeaders(
  rules: CaptureRules,
  headers: JudgedRequest['headers'],
): JudgedRequest['headers'] {
  const header = rules.inboundAuth?.header;
  if (header === undefined || !Object.hasOwn(headers, header)) return headers;
  const kept = { ...headers };
  delete kept[header];
  return kept;
}

/** The value at a dot path of a JSON body, as a key: scalars as text, anything else absent. */
function bodyKey(subject: FilterSubject, path: string): string | undefined {
  let value: unknown = subject.body;
  for (const step of path.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, step)) return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : undefined;
}

function dedupKeyOf(source: string, request: JudgedRequest, subject: FilterSubject): string | null {
  const key = source.startsWith('header:')
    ? firstValue(request.headers[source.slice('header:'.length)])
    : bodyKey(subject, source.slice('body:'.length));
  if (key === undefined || key === '') return null;
  return key.length > DEDUP_KEY_MAX_LENGTH || key.includes('\0')
    ? `sha256:${createHash('sha256').update(key).digest('hex')}`
    : key;
}

/**
 * Judges a capture by its endpoint's rules, in microseconds and without I/O: inbound auth (refused when
 * missing), the provider's signature, the dedup key, and which filtered destinations it skips.
 */
export function judgeCapture(rules: CaptureRules, request: JudgedRequest, nowMs = Date.now()): Verdict {
  if (rules === NO_RULES) return UNJUDGED;
  if (!carriesCredential(rules.inboundAuth, request)) return UNAUTHORIZED;
  const verification =
    rules.verification === null
      ? ({ status: 'none', reason: null } as const)
      : verifySignature(rules.verification, request, nowMs);
  const failed = verification.status === 'failed';
  const subject = new FilterSubject(request);
  return {
    authorized: true,
    verification,
    forward: !(failed && rules.verification?.mode === 'enforce'),
    dedupKey: rules.dedup === null || failed ? null : dedupKeyOf(rules.dedup.source, request, subject),
    skip: rules.filters
      .filter(({ rule }) => !evaluateFilter(rule, subject).matches)
      .map(({ destinationId }) => destinationId),
  };
}
