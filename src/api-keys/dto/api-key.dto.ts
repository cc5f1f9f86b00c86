import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsString, Length, ValidateIf } from 'class-validator';
import { Trim, trimmedLengthMessage } from '../../common/dto/fields';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../model/api-key.entity';

export const API_KEY_NAME_MAX_LENGTH = 100;

export class CreateApiKeyDto {
  /** What the key is for, 1 to 100 characters (trimmed), e.g. "CI deploy checks". */
  @Trim()
  @IsString({ message: 'name must be a string' })
  @Length(1, API_KEY_NAME_MAX_LENGTH, { message: trimmedLengthMessage('name', API_KEY_NAME_MAX_LENGTH) })
  name!: string;

  /** `write` (the default) may do anything the owner can except manage API keys; `read` may only GET. */
  @ApiProperty({ enum: API_KEY_SCOPES, required: false, default: 'write' })
  @ValidateIf((_dto, value) => value !== undefined)
  @IsIn(API_KEY_SCOPES, { message: `scope must be one of ${API_KEY_SCOPES.join(', ')}` })
  scope?: ApiKeyScope;

  /** When the key stops working: an ISO 8601 date-time in the future. Absent or null: never. */
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, required: false })
  @ValidateIf((_dto, value) => value !== null && value !== undefined)
  @IsISO8601(
    { strict: true, strictSeparator: true },
    { message: 'expires_at must be an ISO 8601 date-time, e.g. 2027-01-01T00:00:00Z' },
  )
  expires_at?: string | null;
}

export class ApiKeyDto {
  id!: string;
  name!: string;
  @ApiProperty({ enum: API_KEY_SCOPES })
  scope!: ApiKeyScope;
  /** The key's first 12 characters, e.g. "htk_Xy3kP9aQ". */
  prefix!: string;
  created_at!: string;
  expires_at!: string | null;
  /** Within a minute: the last use is recorded at most once a minute. */
  last_used_at!: string | null;
}

export class ApiKeyListResponseDto {
  api_keys!: ApiKeyDto[];
}

export class CreatedApiKeyResponseDto {
  api_key!: ApiKeyDto;
  /** The key itself ("htk_..."): shown this once, never again (only its hash is kept). */
  key!: string;
}
