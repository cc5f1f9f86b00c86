import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsUUID, Max, Min, ValidateIf } from 'class-validator';

export const DEFAULT_AUDIT_PAGE_SIZE = 50;
export const MAX_AUDIT_PAGE_SIZE = 100;
const MAX_PAGE = 1_000_000;

const PAGE_MESSAGE = `page must be a whole number from 1 to ${MAX_PAGE}`;
const LIMIT_MESSAGE = `limit must be a whole number from 1 to ${MAX_AUDIT_PAGE_SIZE}`;

/** A whole number in the query string becomes a number; anything else stays as sent (and fails validation). */
const toWholeNumber = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;

const present = (_query: unknown, value: unknown) => value !== undefined;

/** The audit log's query: whose log (a team, an endpoint, both, or neither: your own account) and the page. */
export class ListAuditLogQuery {
  /** Only the entries of this team (you must be one of its admins or owners). */
  @ApiPropertyOptional({ format: 'uuid' })
  @ValidateIf(present)
  @IsUUID('all', { message: 'team_id must be a UUID' })
  team_id?: string;

  /** Only the entries of this endpoint (yours, or one of a team you are an admin or owner of). */
  @ApiPropertyOptional({ format: 'uuid' })
  @ValidateIf(present)
  @IsUUID('all', { message: 'endpoint_id must be a UUID' })
  endpoint_id?: string;

  /** Page number, from 1. A page past the last one is empty. */
  @ApiPropertyOptional({ type: 'integer', default: 1 })
  @ValidateIf(present)
  @Transform(toWholeNumber)
  @IsInt({ message: PAGE_MESSAGE })
  @Min(1, { message: PAGE_MESSAGE })
  @Max(MAX_PAGE, { message: PAGE_MESSAGE })
  page: number = 1;

  /** Entries per page, 1 to 100. */
  @ApiPropertyOptional({ type: 'integer', default: DEFAULT_AUDIT_PAGE_SIZE })
  @ValidateIf(present)
  @Transform(toWholeNumber)
  @IsInt({ message: LIMIT_MESSAGE })
  @Min(1, { message: LIMIT_MESSAGE })
  @Max(MAX_AUDIT_PAGE_SIZE, { message: LIMIT_MESSAGE })
  limit: number = DEFAULT_AUDIT_PAGE_SIZE;
}
