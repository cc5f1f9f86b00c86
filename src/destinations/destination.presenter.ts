import type { DestinationBacklog, DestinationBacklogs } from '../delivery/destination-backlogs.service';
import type { SecretBox } from '../secrets/secret-box';
import type { DestinationDto } from './dto/destination.dto';
import type { Destination } from '../model/destination.entity';

/** How a destination's secret is answered: opened for a caller who may write it, else only whether it is set. */
export interface SecretReader {
  secrets: SecretBox;
  /** The access component's answer (Grant.mayWrite), never worked out again here. */
  mayWrite: boolean;
}

/** The API shape of a destination (spec §2, snake_case), with its backlog. */
function toDestinationDto(
  destination: Destination,
  backlog: DestinationBacklog,
  reader: SecretReader,
): DestinationDto {
  const sealed = destination.sealedSecret;
  return {
    id: destination.id,
    endpoint_id: destination.endpoint.id,
    url: destination.url,
    secret: sealed === null || !reader.mayWrite ? null : reader.secrets.open(sealed),
    secret_set: sealed !== null,
    is_active: destination.isActive,
    rate_limit: destination.rateLimit,
    rate_limit_period: destination.rateLimitPeriod,
    max_in_flight: destination.maxInFlight,
    paused: destination.paused,
    paused_reason: destination.pausedReason,
    auto_pause_after: destination.autoPauseAfter,
    ordering: destination.ordering,
    filter: destination.filter,
    created_at: destination.createdAt.toISOString(),
    backlog: {
      pending: backlog.pending,
      oldest_pending_at: backlog.oldestPendingAt?.toISOString() ?? null,
    },
  };
}

/**
 * Destinations in the API shape (their secrets opened for a caller who may write them), their backlogs
 * read in one query.
 */
export async function toDestinationDtos(
  destinations: readonly Destination[],
  backlogs: DestinationBacklogs,
  reader: SecretReader,
): Promise<DestinationDto[]> {
  const byId = await backlogs.of(destinations.map((destination) => destination.id));
  return destinations.map((destination) => toDestinationDto(destination, byId.get(destination.id)!, reader));
}
