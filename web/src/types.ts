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
  created_at: string;
  /** Deliveries waiting for it (pending, or failed and owed a retry). */
  backlog: { pending: number; oldest_pending_at: string | null };
}

export interface Endpoint {
  id: string;
  user_id: string;
  name: string;
  public_token: string;
  capture_url: string;
  is_active: boolean;
  metadata: Record<string, unknown>;
  created_at: string;
  destinations?: Destination[];
}

export const EVENT_STATUSES = ['received', 'delivered', 'failed', 'dead_letter'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** An event as listed; the live stream may send only a summary (id, endpoint_id, status, method, source_ip, received_at). */
export interface HookEvent {
  id: string;
  endpoint_id: string;
  status: EventStatus | string;
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
  /** ISO 8601, or '' for none. */
  from: string;
  q: string;
  page: number;
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
