import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsString, Max, MaxLength, Min, registerDecorator, ValidateIf } from 'class-validator';
import {
  EVENT_STATUSES,
  type EventStatus,
  VERIFICATION_STATUSES,
  type VerificationStatus,
} from '../../model/event.entity';
import { isStorableInstant } from '../../common/storable-instant';
import type { EventFilters } from '../events.repository';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
const MAX_PAGE = 1_000_000;

/** A whole number in the query string becomes a number; anything else stays as sent (and fails validation). */
const toWholeNumber = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;

/**
 * An ISO 8601 date or date-time; a date-time without an offset is read as UTC. Null when invalid, or when
 * the instant falls outside the years 1 to 9999 in UTC (`isStorableInstant`).
 */
export function parseInstant(value: string): Date | null {
  const match =
    /^(\d{4})-(\d{2})-(\d{2})(?:T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(
      value,
    );
  if (!match) return null;
  const [, year, month, day, hour, , , offset] = match;
  const calendarDay = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (calendarDay.getUTCMonth() !== Number(month) - 1 || calendarDay.getUTCDate() !== Number(day))
    return null;
  const instant = new Date(hour !== undefined && offset === undefined ? `${value}Z` : value);
  return isStorableInstant(instant) ? instant : null;
}

function IsInstant(parameter: string): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isInstant',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: `${parameter} must be an ISO 8601 date or date-time, e.g. 2026-11-23T10:00:00Z` },
      validator: { validate: (value: unknown) => typeof value === 'string' && parseInstant(value) !== null },
    });
}

const present = (_query: unknown, value: unknown) => value !== undefined;

/** The filters of the events list, also those of a bulk replay. */
export class EventFilterFields {
  /** Only events in this status. */
  @ValidateIf(present)
  @IsIn(EVENT_STATUSES, { message: `status must be one of ${EVENT_STATUSES.join(', ')}` })
  status?: EventStatus;

  /** Only events received at or after this time (ISO 8601; without an offset: UTC). @example 2026-11-23T00:00:00Z */
  @ValidateIf(present)
  @IsInstant('from')
  from?: string;

  /** Only events received before this time (exclusive; ISO 8601). @example 2026-11-24T00:00:00Z */
  @ValidateIf(present)
  @IsInstant('to')
  to?: string;

  /**
   * Only events whose body contains this text, case-insensitively (a word, an id such as cus_123, a dotted
   * type such as invoice.paid; % and _ match themselves). Bodies that are not UTF-8 text are not searched.
   */
  @ValidateIf(present)
  @IsString({ message: 'q must be a string' })
  @MaxLength(500, { message: 'q must be at most 500 characters' })
  q?: string;
}

/** The events list's query: the filters and the page. */
export class ListEventsQuery extends EventFilterFields {
  /** Only events whose provider signature is in this state (`failed`: those that did not verify). */
  @ValidateIf(present)
  @IsIn(VERIFICATION_STATUSES, { message: `verification must be one of ${VERIFICATION_STATUSES.join(', ')}` })
  verification?: VerificationStatus;

  /** Page number, from 1. A page past the last one is empty. */
  @ApiPropertyOptional({ type: 'integer', default: 1 })
  @ValidateIf(present)
  @Transform(toWholeNumber)
  @IsInt({ message: `page must be a whole number from 1 to ${MAX_PAGE}` })
  @Min(1, { message: `page must be a whole number from 1 to ${MAX_PAGE}` })
  @Max(MAX_PAGE, { message: `page must be a whole number from 1 to ${MAX_PAGE}` })
  page: number = 1;

  /** Events per page, 1 to 100. */
  @ApiPropertyOptional({ type: 'integer', default: DEFAULT_PAGE_SIZE })
  @ValidateIf(present)
  @Transform(toWholeNumber)
  @IsInt({ message: `limit must be a whole number from 1 to ${MAX_PAGE_SIZE}` })
  @Min(1, { message: `limit must be a whole number from 1 to ${MAX_PAGE_SIZE}` })
  @Max(MAX_PAGE_SIZE, { message: `limit must be a whole number from 1 to ${MAX_PAGE_SIZE}` })
  limit: number = DEFAULT_PAGE_SIZE;
}

/** The filters as the repository takes them (validated fields; an empty `q` is no filter). */
export function eventFiltersOf(fields: EventFilterFields): EventFilters {
  return {
    status: fields.status,
    from: fields.from === undefined ? undefined : (parseInstant(fields.from) ?? undefined),
    to: fields.to === undefined ? undefined : (parseInstant(fields.to) ?? undefined),
    q: fields.q === undefined || fields.q === '' ? undefined : fields.q,
  };
}
