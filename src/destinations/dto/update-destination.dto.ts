import { IsBoolean, IsString, Length, ValidateIf } from 'class-validator';
import { Trim } from '../../common/dto/fields';
import { IsAbsoluteHttpsUrl, SECRET_MAX_LENGTH } from '../../common/dto/https-url';
import { DestinationSettingsDto } from './destination-settings.dto';

/** Only the fields sent change. */
export class UpdateDestinationDto extends DestinationSettingsDto {
  /**
   * A new absolute https:// URL; later deliveries (and retries) go there.
   * @example https://api.example.com/webhooks/stripe
   */
  @ValidateIf((_dto, value) => value !== undefined)
  @Trim()
  @IsAbsoluteHttpsUrl()
  url?: string;

  /** A new signing secret (1 to 256 characters), or null to stop signing. */
  @ValidateIf((_dto, value) => value !== undefined && value !== null)
  @IsString({ message: 'secret must be a string or null' })
  @Length(1, SECRET_MAX_LENGTH, { message: `secret must be 1 to ${SECRET_MAX_LENGTH} characters` })
  secret?: string | null;

  /** false: new events are no longer forwarded to it; true: they are again. */
  @ValidateIf((_dto, value) => value !== undefined)
  @IsBoolean({ message: 'is_active must be true or false' })
  is_active?: boolean;
}
