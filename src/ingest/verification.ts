import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signature verification over the exact raw request bytes: pure, synchronous, no I/O.
 *
 * Every scheme is checked here with node:crypto rather than through the providers' libraries, which
 * each fall short of this contract:
 * - Stripe's SDK (`webhooks.signature.verifyHeader`) decodes the body as UTF-8 before hashing, so a
 *   body with a byte-order mark or invalid UTF-8 verifies with the signature of other bytes, and it
 *   accepts timestamps any distance in the future;
 * - `@octokit/webhooks-methods` verifies asynchronously;
 * - `standardwebhooks` has a fixed 5-minute tolerance and also decodes the body as text.
 * The unit tests sign with those libraries, so each scheme is checked against its provider's own code.
 */

export const VERIFICATION_PROVIDERS = [
  'stripe',
  'github',
  'shopify',
  'slack',
  'standard_webhooks',
  'hmac',
] as const;
export type VerificationProvider = (typeof VERIFICATION_PROVIDERS)[number];
export const HMAC_ALGORITHMS = ['sha1', 'sha256', 'sha512'] as const;
export const HMAC_ENCODINGS = ['hex', 'base64'] as const;
export const DEFAULT_TOLERANCE_SECONDS = 300;

type HmacAlgorithm = (typeof HMAC_ALGORITHMS)[number];
type HmacEncoding = (typeof HMAC_ENCODINGS)[number];

/** A verification rule with its secret in plain text (already decrypted). */
export interface VerificationRule {
  provider: VerificationProvider;
  secret: string;
  mode: 'flag' | 'enforce';
  /** Default 300; Stripe, Slack, Standard Webhooks. */
  tolerance_seconds?: number;
  /** hmac only: header name (any case given; compare lower-case). */
  header?: string;
  /** hmac only, default sha256. */
  algorithm?: HmacAlgorithm;
  /** hmac only, default hex. */
  encoding?: HmacEncoding;
  /** hmac only, e.g. "sha256=" stripped from the header value before comparing. */
  prefix?: string;
}

export interface SignedRequest {
  /** Node's request headers: lower-case names, a value may be string or string[] (repeated header). */
  headers: Record<string, string | string[] | undefined>;
  /** Exact raw bytes. */
  body: Buffer;
}

export type VerificationResult = { status: 'verified'; reason: null } | { status: 'failed'; reason: string };

/** A scheme that signs the body alone and sends the signature in one header. */
interface BodyScheme {
  /** As shown to the user; looked up lower-cased. */
  header: string;
  algorithm: HmacAlgorithm;
  encoding: HmacEncoding;
  prefix: string;
}

const GITHUB: BodyScheme = {
  header: 'X-Hub-Signature-256',
  algorithm: 'sha256',
  encoding: 'hex',
  prefix: 'sha256=',
};
const SHOPIFY: BodyScheme = {
  header: 'X-Shopify-Hmac-Sha256',
  algorithm: 'sha256',
  encoding: 'base64',
  prefix: '',
};

const NO_MATCH = 'no signature matches the secret (body changed or wrong secret)';
const UNIX_SECONDS = /^\d{1,12}$/;

/**
 * Checks `request` against `rule` (the mode does not change the result: the caller acts on it).
 * Never throws: an unexpected error is a failure whose reason names only the error's code.
 */
export function verifySignature(
  rule: VerificationRule,
  request: SignedRequest,
  nowMs: number = Date.now(),
): VerificationResult {
  try {
    if (!rule.secret) return failed('no secret is set for this verification');
    switch (rule.provider) {
      case 'stripe':
        return verifyStripe(rule, request, nowMs);
      case 'github':
        return verifyBodyScheme(GITHUB, rule.secret, request);
      case 'shopify':
        return verifyBodyScheme(SHOPIFY, rule.secret, request);
      case 'slack':
        return verifySlack(rule, request, nowMs);
      case 'standard_webhooks':
        return verifyStandardWebhooks(rule, request, nowMs);
      case 'hmac':
        return verifyHmac(rule, request);
      default:
        return failed(`unknown verification provider "${String(rule.provider as unknown)}"`);
    }
  } catch (error) {
    // Only a code or name: a message may quote an argument, and an argument may be the secret.
    const code =
      error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.name) : typeof error;
    return failed(`the signature could not be checked (${code})`);
  }
}

/** Stripe: `Stripe-Signature: t=<ts>,v1=<hex>[,v1=...]` over `<ts>.<body>`, the whsec_ secret as-is. */
function verifyStripe(
  rule: VerificationRule,
  { headers, body }: SignedRequest,
  nowMs: number,
): VerificationResult {
  const header = firstValue(headers['stripe-signature']);
  if (!header) return missingHeader('Stripe-Signature');
  const [timestamp] = listValues(header, ',', 't=');
  const signatures = listValues(header, ',', 'v1=');
  if (signatures.length === 0) return failed('the Stripe-Signature header has no v1 signature');
  const problem = timestampProblem(timestamp, 'timestamp (t=) in the Stripe-Signature header', rule, nowMs);
  if (problem) return failed(problem);
  return matchSignature(rule.secret, 'sha256', 'hex', `${timestamp}.`, body, signatures);
}

/** Slack: `X-Slack-Signature: v0=<hex>` over `v0:<X-Slack-Request-Timestamp>:<body>`. */
function verifySlack(
  rule: VerificationRule,
  { headers, body }: SignedRequest,
  nowMs: number,
): VerificationResult {
  const signature = firstValue(headers['x-slack-signature']);
  if (!signature) return missingHeader('X-Slack-Signature');
  const timestamp = firstValue(headers['x-slack-request-timestamp']);
  if (!timestamp) return missingHeader('X-Slack-Request-Timestamp');
  if (!signature.startsWith('v0=')) return prefixMissing('X-Slack-Signature', 'v0=');
  const problem = timestampProblem(timestamp, 'X-Slack-Request-Timestamp header', rule, nowMs);
  if (problem) return failed(problem);
  return matchSignature(rule.secret, 'sha256', 'hex', `v0:${timestamp}:`, body, [signature.slice(3)]);
}

/**
 * Standard Webhooks: `webhook-signature: v1,<base64> [v1,<base64> ...]` (other versions ignored) over
 * `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64-decoded secret (whsec_ prefix optional).
 */
function verifyStandardWebhooks(
  rule: VerificationRule,
  { headers, body }: SignedRequest,
  nowMs: number,
): VerificationResult {
  const id = firstValue(headers['webhook-id']);
  if (!id) return missingHeader('webhook-id');
  const timestamp = firstValue(headers['webhook-timestamp']);
  if (!timestamp) return missingHeader('webhook-timestamp');
  const header = firstValue(headers['webhook-signature']);
  if (!header) return missingHeader('webhook-signature');
  const signatures = listValues(header, ' ', 'v1,');
  if (signatures.length === 0) return failed('the webhook-signature header has no v1 signature');
  const problem = timestampProblem(timestamp, 'webhook-timestamp header', rule, nowMs);
  if (problem) return failed(problem);
  const key = Buffer.from(rule.secret.startsWith('whsec_') ? rule.secret.slice(6) : rule.secret, 'base64');
  if (key.length === 0) return failed('the secret is not a base64 Standard Webhooks secret');
  return matchSignature(key, 'sha256', 'base64', `${id}.${timestamp}.`, body, signatures);
}

/** Generic HMAC of the body, per the rule's header, algorithm, encoding and prefix. */
function verifyHmac(rule: VerificationRule, request: SignedRequest): VerificationResult {
  if (!rule.header) return failed('no header name is set for this HMAC verification');
  const scheme: BodyScheme = {
    header: rule.header,
    algorithm: rule.algorithm ?? 'sha256',
    encoding: rule.encoding ?? 'hex',
    prefix: rule.prefix ?? '',
  };
  return verifyBodyScheme(scheme, rule.secret, request);
}

function verifyBodyScheme(
  scheme: BodyScheme,
  secret: string,
  { headers, body }: SignedRequest,
): VerificationResult {
  const value = firstValue(headers[scheme.header.toLowerCase()]);
  if (!value) return missingHeader(scheme.header);
  if (!value.startsWith(scheme.prefix)) return prefixMissing(scheme.header, scheme.prefix);
  return matchSignature(secret, scheme.algorithm, scheme.encoding, '', body, [
    value.slice(scheme.prefix.length),
  ]);
}

/**
 * Verified when any candidate equals the HMAC of `signedPrefix` followed by the body bytes, each
 * compared in constant time (hex case-insensitively; a length mismatch is a plain failure).
 */
function matchSignature(
  key: string | Buffer,
  algorithm: HmacAlgorithm,
  encoding: HmacEncoding,
  signedPrefix: string,
  body: Buffer,
  candidates: readonly string[],
): VerificationResult {
  // Two updates hash the same bytes as Buffer.concat([prefix, body]) without copying the body.
  const expected = Buffer.from(createHmac(algorithm, key).update(signedPrefix).update(body).digest(encoding));
  for (const candidate of candidates) {
    const given = Buffer.from(encoding === 'hex' ? candidate.toLowerCase() : candidate);
    if (given.length === expected.length && timingSafeEqual(given, expected)) {
      return { status: 'verified', reason: null };
    }
  }
  return failed(NO_MATCH);
}

/** Why a decimal Unix-seconds header field is unusable or outside the rule's tolerance; null when fine. */
function timestampProblem(
  seconds: string | undefined,
  what: string,
  rule: VerificationRule,
  nowMs: number,
): string | null {
  if (seconds === undefined || !UNIX_SECONDS.test(seconds)) return `malformed ${what}`;
  const tolerance = rule.tolerance_seconds ?? DEFAULT_TOLERANCE_SECONDS;
  const age = Math.floor(nowMs / 1000) - Number(seconds);
  if (Math.abs(age) <= tolerance) return null; // written so that a NaN tolerance fails
  return age > 0
    ? `timestamp is ${age} s old (tolerance ${tolerance} s)`
    : `timestamp is ${-age} s in the future (tolerance ${tolerance} s)`;
}

/** The values after `prefix` of the items of `list` that start with it: ("t=1,v1=a,v1=b", ",", "v1=") is [a, b]. */
function listValues(list: string, separator: string, prefix: string): string[] {
  const values: string[] = [];
  for (const item of list.split(separator)) {
    if (item.startsWith(prefix)) values.push(item.slice(prefix.length));
  }
  return values;
}

/** A header's value; a repeated header counts by its first value. */
function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function failed(reason: string): VerificationResult {
  return { status: 'failed', reason };
}

function missingHeader(header: string): VerificationResult {
  return failed(`missing the ${header} header`);
}

function prefixMissing(header: string, prefix: string): VerificationResult {
  return failed(`the ${header} header does not start with "${prefix}"`);
}
