import type { DestinationDto } from './dto/destination.dto';
import type { Destination } from './destination.entity';

/** The API shape of a destination (spec §2, snake_case). */
export function toDestinationDto(destination: Destination): DestinationDto {
  return {
    id: destination.id,
    endpoint_id: destination.endpoint.id,
    url: destination.url,
    secret: destination.secret,
    is_active: destination.isActive,
    created_at: destination.createdAt.toISOString(),
  };
}
