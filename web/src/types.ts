export type Plan = 'free' | 'starter' | 'pro' | 'team';

export interface User {
  id: string;
  email: string;
  name: string;
  plan: Plan | string;
}

export interface Session {
  user: User;
  accessToken: string;
  refreshToken: string;
}

export interface Destination {
  id: string;
  endpoint_id: string;
  url: string;
  secret: string | null;
  is_active: boolean;
  /** At most this many attempts per rate_limit_period (null: no limit). */
  rate_limit: number | null;
  rate_limit_period: 'second' | 'minute';
  /** At most this many attempts at once (null: a fair share). */
  max_in_flight: number | null;
  /** Deliveries are held, none attempted, until it is resumed. */
  paused: boolean;
  /** fifo: one attempt at a time, in capture order; a failing delivery blocks those after it. */
  ordering: 'none' | 'fifo';
  /** Which events it gets (decided at capture); null: every event. */
  filter: FilterRule | null;
  created_at: string;
  /** Deliveries waiting for it (pending, or failed and owed a retry). */
  backlog: { pending: number; oldest_pending_at: string | null };
}

/**
 * A destination filter, Hookdeck-style: `body`, `headers`, `query` and `method` matched by values, nested
 * objects and operators ($eq $neq $in $nin $exists $gt $gte $lt $lte $startsWith $contains $and $or $not).
 * The server checks it; a bad rule is a 400 naming its path.
 */
export type FilterRule = Record<string, unknown>;

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

/** The provider's signature check. Answered with `secret` masked ("••••" and its last 4 characters). */
export interface Verification {
  provider: VerificationProvider;
  secret: string;
  /** enforce: a failing request is answered 401, stored, never forwarded; flag: stored, forwarded, marked. */
  mode: 'flag' | 'enforce';
  /** stripe, slack, standard_webhooks: how old a signed timestamp may be. */
  tolerance_seconds?: number;
  /** hmac only: the signature's header (lower case), its hash, encoding, and the text before it. */
  header?: string;
  algorithm?: (typeof HMAC_ALGORITHMS)[number];
  encoding?: (typeof HMAC_ENCODINGS)[number];
  prefix?: string;
}

/** A credential every capture must carry; `password` and `value` are answered masked. */
export type InboundAuth =
  { type: 'basic'; username: string; password: string } | { type: 'header'; name: string; value: string };

/** A repeat of a delivery within the window is answered with the first event, not stored again. */
export interface Dedup {
  /** `provider`, `header:<lower-case name>` or `body:<dot.path>`. */
  key: string;
  window_seconds: number;
}

/** What POST and PATCH of an endpoint take for its ingest rules: null removes one, absent keeps it. */
export interface IngestRulesInput {
  verification?: (Omit<Verification, 'secret'> & { secret?: string }) | null;
  inbound_auth?:
    | { type: 'basic'; username: string; password?: string }
    | { type: 'header'; name: string; value?: string }
    | null;
  dedup?: { key: string; window_seconds?: number } | null;
}

export interface Endpoint {
  id: string;
  user_id: string;
  name: string;
  public_token: string;
  capture_url: string;
  is_active: boolean;
  metadata: Record<string, unknown>;
  verification: Verification | null;
  inbound_auth: InboundAuth | null;
  dedup: Dedup | null;
  created_at: string;
  destinations?: Destination[];
}

export const EVENT_STATUSES = ['received', 'delivered', 'failed', 'dead_letter'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

export const VERIFICATION_STATUSES = ['failed', 'verified', 'none'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

export interface EventVerification {
  /** none: the endpoint checks no signature. */
  status: VerificationStatus;
  /** Why it failed; null otherwise. */
  reason: string | null;
}

/**
 * An event as listed; the live stream may send only a summary (id, endpoint_id, status, verification,
 * method, source_ip, received_at).
 */
export interface HookEvent {
  id: string;
  endpoint_id: string;
  status: EventStatus | string;
  verification?: EventVerification;
  /** Repeats the endpoint's dedup answered without storing them. */
  duplicate_count?: number;
  method?: string;
  headers?: Record<string, string | string[]>;
  query?: string;
  body?: string;
  body_encoding?: 'base64';
  /** In the events list only: the body is cut to its first 65,536 characters (the event route has it whole). */
  body_truncated?: true;
  source_ip?: string | null;
  received_at?: string;
}

export interface DeliveryAttempt {
  at: string;
  response_code: number | null;
  duration_ms: number | null;
  error: string | null;
  response_body?: string | null;
}

export interface Delivery {
  id: string;
  event_id: string;
  destination: { id: string | null; url: string };
  status: 'pending' | 'delivered' | 'failed' | 'dead_letter' | string;
  attempt_count: number;
  response_code: number | null;
  response_body: string | null;
  last_attempted_at: string | null;
  created_at: string;
  attempts?: DeliveryAttempt[];
}

export interface EventWithDeliveries extends HookEvent {
  deliveries: Delivery[];
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  pages: number;
  /** A search matched more than `total` events (the API counts searches up to 1,000). */
  total_capped?: boolean;
}

export interface EventFilters {
  status: string;
  /** A VerificationStatus, or '' for any. */
  verification: string;
  /** ISO 8601, or '' for none. */
  from: string;
  q: string;
  page: number;
}

/** Whether a destination would get the event were it captured now, and why not. */
export interface EventRoute {
  id: string;
  url: string;
  receives: boolean;
  reason: string | null;
}

/** A filter tried on an event: the first part of the rule it does not match, when it does not. */
export interface FilterVerdict {
  matches: boolean;
  reason: string | null;
}

/** A bulk replay of the events matching a filter, and its progress. */
export interface BulkReplay {
  id: string;
  endpoint_id: string;
  status: 'running' | 'completed' | 'cancelled';
  filter: { status?: string; from?: string; to?: string; q?: string };
  total: number;
  done: number;
  created_at: string;
  finished_at: string | null;
}
