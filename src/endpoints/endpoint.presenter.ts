import type { DestinationBacklogs } from '../delivery/destination-backlogs.service';
import { toDestinationDtos } from '../destinations/destination.presenter';
import type { SecretBox } from '../secrets/secret-box';
import type { EndpointDto, EndpointWithDestinationsDto } from './dto/endpoint.dto';
import type { Endpoint } from './endpoint.entity';

/** The capture URL of a token: `{SITE_URL}/in/<token>`. */
export function captureUrl(siteUrl: string, publicToken: string): string {
  return `${siteUrl}/in/${publicToken}`;
}

/** The API shape of an endpoint (spec §2, snake_case), with its capture URL. */
export function toEndpointDto(endpoint: Endpoint, siteUrl: string): EndpointDto {
  return {
    id: endpoint.id,
    user_id: endpoint.user.id,
    name: endpoint.name,
    public_token: endpoint.publicToken,
    capture_url: captureUrl(siteUrl, endpoint.publicToken),
    is_active: endpoint.isActive,
    metadata: endpoint.metadata,
    created_at: endpoint.createdAt.toISOString(),
  };
}

/** The endpoint with its destinations (loaded, oldest first), as GET /api/endpoints/:id answers. */
export async function toEndpointWithDestinationsDto(
  endpoint: Endpoint,
  siteUrl: string,
  backlogs: DestinationBacklogs,
  secrets: SecretBox,
): Promise<EndpointWithDestinationsDto> {
  return {
    ...toEndpointDto(endpoint, siteUrl),
    destinations: await toDestinationDtos(endpoint.destinations.getItems(), backlogs, secrets),
  };
}
