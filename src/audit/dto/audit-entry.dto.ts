import { ApiProperty } from '@nestjs/swagger';
import { ACTOR_TYPES, type ActorType } from '../audit-entry';

export class AuditActorDto {
  /** `user` (a signed-in session) or `api_key`. */
  @ApiProperty({ enum: ACTOR_TYPES })
  type!: ActorType;
  /** The user's id, or the API key's. */
  id!: string;
  /** The user's email (the key's owner for an API key), as it was at the time. @example ana@example.com */
  email!: string;
}

export class AuditTargetDto {
  /** What was acted on. @example destination */
  type!: string;
  /** Its id; null when the answer did not name it. */
  @ApiProperty({ type: 'string', nullable: true })
  id!: string | null;
}

export class AuditEntryDto {
  /** Grows with every entry. @example 1042 */
  id!: string;
  /** ISO 8601 UTC. @example 2026-11-26T10:00:00.000Z */
  at!: string;
  actor!: AuditActorDto;
  /** `<resource>.created|updated|deleted`, or another verb. @example destination.created */
  action!: string;
  target!: AuditTargetDto;
  /** The caller's IP (from X-Forwarded-For only when TRUST_PROXY=true). @example 203.0.113.7 */
  @ApiProperty({ type: 'string', nullable: true })
  ip!: string | null;
  /**
   * The request body as sent, every secret value (secrets, passwords, tokens, API keys, an inbound
   * header's value) as "[redacted]"; `{truncated: true, keys}` for a body over 16 KiB; `{}` without a body.
   */
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { url: 'https://api.example.com/hooks', secret: '[redacted]' },
  })
  changes!: Record<string, unknown>;
}

export class AuditLogPaginationDto {
  /** @example 1 */
  page!: number;
  /** @example 50 */
  limit!: number;
  /** Entries matching the filters. */
  total!: number;
  /** ceil(total / limit); 0 when nothing matches. */
  pages!: number;
}

export class AuditLogResponseDto {
  /** Newest first. */
  entries!: AuditEntryDto[];
  pagination!: AuditLogPaginationDto;
}
