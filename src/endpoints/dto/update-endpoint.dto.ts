import { IsBoolean, IsString, Length, ValidateIf } from 'class-validator';
import { IsMetadataObject, NAME_MAX_LENGTH, Trim, trimmedLengthMessage } from '../../common/dto/fields';
import { EndpointPlacementDto } from './endpoint-placement.dto';

/** Only the fields sent change. `null` removes an ingest rule, and is not a value for the other fields. */
export class UpdateEndpointDto extends EndpointPlacementDto {
  /** A new label, 1 to 200 characters (trimmed). */
  @ValidateIf((_dto, value) => value !== undefined)
  @Trim()
  @IsString({ message: 'name must be a string' })
  @Length(1, NAME_MAX_LENGTH, { message: trimmedLengthMessage('name', NAME_MAX_LENGTH) })
  name?: string;

  /** false: the capture URL answers 403 and stores nothing; true: it captures again. */
  @ValidateIf((_dto, value) => value !== undefined)
  @IsBoolean({ message: 'is_active must be true or false' })
  is_active?: boolean;

  /** Replaces the whole metadata object: a JSON object of at most 16 KiB. */
  @ValidateIf((_dto, value) => value !== undefined)
  @IsMetadataObject()
  metadata?: Record<string, unknown>;
}
