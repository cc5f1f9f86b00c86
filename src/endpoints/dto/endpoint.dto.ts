import { ApiExtraModels, ApiProperty } from '@nestjs/swagger';
import { type Role, ROLES } from '../../access/roles';
import { DestinationDto } from '../../destinations/dto/destination.dto';
import {
  BasicInboundAuthDto,
  DedupDto,
  HeaderInboundAuthDto,
  taggedUnion,
  VerificationDto,
} from './ingest-rules.dto';

@ApiExtraModels(BasicInboundAuthDto, HeaderInboundAuthDto)
export class EndpointDto {
  /** @example 0b7a1c9e-6a43-4d0e-9d3f-3c2d1f0e9a87 */
  id!: string;
  user_id!: string;
  /** The team it belongs to; null: its user's own. */
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true })
  team_id!: string | null;
  /** Your role on it: `owner` of your own endpoints, else your role in its team. */
  @ApiProperty({ enum: ROLES })
  role!: Role;
  /** Days its events are kept when shorter than the plan's; null: the plan's (RETENTION_DAYS). */
  @ApiProperty({ type: 'integer', nullable: true })
  retention_days!: number | null;
  /** @example Stripe production */
  name!: string;
  /** The secret part of the capture URL: 192 random bits, base64url. Never changes. */
  public_token!: string;
  /** `{SITE_URL}/in/{public_token}`: send webhooks here. */
  capture_url!: string;
  /** false: the capture URL answers 403 and stores nothing. */
  is_active!: boolean;
  /** Your own key-value pairs; {} by default. */
  metadata!: Record<string, unknown>;
  /** The provider signature check, its secret masked ("••••" + last 4); null: none. */
  @ApiProperty({ type: VerificationDto, nullable: true })
  verification!: VerificationDto | null;
  /** The credential captures must carry, its password or value masked; null: none. */
  @ApiProperty({
    ...taggedUnion({ basic: BasicInboundAuthDto, header: HeaderInboundAuthDto }),
    nullable: true,
  })
  inbound_auth!: BasicInboundAuthDto | HeaderInboundAuthDto | null;
  @ApiProperty({ type: DedupDto, nullable: true })
  dedup!: DedupDto | null;
  /** ISO 8601 UTC. @example 2026-11-23T10:00:00.000Z */
  created_at!: string;
}

export class EndpointWithDestinationsDto extends EndpointDto {
  /** Oldest first. */
  destinations!: DestinationDto[];
}

export class EndpointResponseDto {
  endpoint!: EndpointDto;
}

export class EndpointDetailResponseDto {
  endpoint!: EndpointWithDestinationsDto;
}

export class EndpointListResponseDto {
  /** Newest first. */
  endpoints!: EndpointDto[];
}
