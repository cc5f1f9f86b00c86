import type { DestinationBacklog, DestinationBacklogs } from '../delivery/destination-backlogs.service';
import type { SecretBox } from '../secrets/secret-box';
import type { DestinationDto } from './dto/destination.dto';
import type { Destination } from './destination.entity';

/** The API shape of a destination (spec §2, snake_case), with its backlog. */
function toDestinationDto(
  destination: Destination,
  backlog: DestinationBacklog,
  secrets: SecretBox,
): DestinationDto {
  return {
    id: destination.id,
    endpoint_id: destination.endpoint.id,
    url: destination.url,
    secret: destination.sealedSecret === null ? null : secrets.open(destination.sealedSecret),
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

/** Destinations in the API shape (their secrets opened), their backlogs read in one query. */
export async function toDestinationDtos(
  destinations: readonly Destination[],
  backlogs: DestinationBacklogs,
  secrets: SecretBox,
): Promise<DestinationDto[]> {
  const byId = await backlogs.of(destinations.map((destination) => destination.id));
  return destinations.map((destination) => toDestinationDto(destination, byId.get(destination.id)!, secrets));
}
