import type { Grant } from '../access/access.repository';
import type { Role } from '../access/roles';
import type { DestinationBacklogs } from '../delivery/destination-backlogs.service';
import { toDestinationDtos } from '../destinations/destination.presenter';
import { maskSecret } from '../ingest/ingest-rules';
import type { SecretBox } from '../secrets/secret-box';
import type { EndpointDto, EndpointWithDestinationsDto } from './dto/endpoint.dto';
import type { Endpoint } from '../model/endpoint.entity';

/** The capture URL of a token: `{SITE_URL}/in/<token>`. */
export function captureUrl(siteUrl: string, publicToken: string): string {
  return `${siteUrl}/in/${publicToken}`;
}

/** The ingest rules as answered: their secrets masked. */
function presentRules(
  endpoint: Endpoint,
  secrets: SecretBox,
): Pick<EndpointDto, 'verification' | 'inbound_auth' | 'dedup'> {
  const masked = (sealed: string | null) => maskSecret(sealed === null ? '' : secrets.open(sealed));
  const { verification, inboundAuth } = endpoint;
  return {
    verification:
      verification === null ? null : { ...verification, secret: masked(endpoint.verificationSecret) },
    inbound_auth:
      inboundAuth === null
        ? null
        : inboundAuth.type === 'basic'
          ? { ...inboundAuth, password: masked(endpoint.inboundAuthSecret) }
          : { ...inboundAuth, value: masked(endpoint.inboundAuthSecret) },
    dedup: endpoint.dedup,
  };
}

/** The API shape of an endpoint (spec §2, snake_case), with its capture URL and ingest rules. */
export function toEndpointDto(
  endpoint: Endpoint,
  role: Role,
  siteUrl: string,
  secrets: SecretBox,
): EndpointDto {
  return {
    id: endpoint.id,
    user_id: endpoint.user.id,
    team_id: endpoint.teamId,
    role,
    retention_days: endpoint.retentionDays,
    name: endpoint.name,
    public_token: endpoint.publicToken,
    capture_url: captureUrl(siteUrl, endpoint.publicToken),
    is_active: endpoint.isActive,
    metadata: endpoint.metadata,
    ...presentRules(endpoint, secrets),
    created_at: endpoint.createdAt.toISOString(),
  };
}

/**
 * The endpoint with its destinations (loaded, oldest first), as GET /api/endpoints/:id answers: with the
 * caller's role, and their destinations' secrets when the grant may write them.
 */
export async function toEndpointWithDestinationsDto(
  endpoint: Endpoint,
  grant: Grant,
  siteUrl: string,
  backlogs: DestinationBacklogs,
  secrets: SecretBox,
): Promise<EndpointWithDestinationsDto> {
  return {
    ...toEndpointDto(endpoint, grant.role, siteUrl, secrets),
    destinations: await toDestinationDtos(endpoint.destinations.getItems(), backlogs, {
      secrets,
      mayWrite: grant.mayWrite,
    }),
  };
}
