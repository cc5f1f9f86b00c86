import { evaluateFilter, type FilterRule, FilterSubject } from './filter';

/** A stored event's request, as the events table keeps it. */
export interface StoredRequest {
  method: string;
  headers: Record<string, string | string[]>;
  query: string;
  body_text: string | null;
  body_bytes: Buffer | null;
}

/** A stored event as routing sees it: its request and how its signature was judged. */
export interface RoutedEvent extends StoredRequest {
  verification_status: string;
  verification_reason: string | null;
}

/** The stored request as a filter sees it. */
export function filterSubjectOf(event: StoredRequest): FilterSubject {
  return new FilterSubject({
    method: event.method,
    headers: event.headers,
    query: event.query,
    body: event.body_text === null ? (event.body_bytes ?? Buffer.alloc(0)) : Buffer.from(event.body_text),
  });
}

/** A destination as routing sees it. */
export interface RouteCandidate {
  is_active: boolean;
  filter: FilterRule | null;
}

/** Whether an endpoint enforces its verification, in a select from (or joined to) `endpoints ep`. */
export const ENFORCES_VERIFICATION = `coalesce(ep.verification->>'mode' = 'enforce', false)`;

/** Why no destination receives the event (its signature failed and the endpoint enforces it), or null. */
export function verificationBlock(
  event: Pick<RoutedEvent, 'verification_status' | 'verification_reason'>,
  enforced: boolean,
): string | null {
  return enforced && event.verification_status === 'failed'
    ? `the signature did not verify and verification is enforced (${event.verification_reason})`
    : null;
}

/**
 * Why a destination would not receive a stored event were it captured now (inactive, a failed signature
 * on an endpoint that enforces verification, or the filter's first mismatch), or null when it would. The
 * event page's routing and every replay ask this, so a replay goes exactly where a capture would.
 */
export class EventRouting {
  /** The request parsed once, for the first destination with a filter. */
  private subject?: FilterSubject;

  constructor(
    private readonly event: RoutedEvent,
    /** The endpoint enforces its verification. */
    private readonly enforced: boolean,
  ) {}

  reasonNotReceived(destination: RouteCandidate): string | null {
    if (!destination.is_active) return 'the destination is inactive';
    const blocked = verificationBlock(this.event, this.enforced);
    if (blocked !== null) return blocked;
    return destination.filter === null
      ? null
      : evaluateFilter(destination.filter, (this.subject ??= filterSubjectOf(this.event))).reason;
  }
}
