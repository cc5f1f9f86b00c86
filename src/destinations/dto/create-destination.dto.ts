import { IsString, Length, ValidateIf } from 'class-validator';
import { Trim } from '../../common/dto/fields';
import { IsAbsoluteHttpsUrl, SECRET_MAX_LENGTH } from '../../common/dto/https-url';
import { DestinationSettingsDto } from './destination-settings.dto';

export class CreateDestinationDto extends DestinationSettingsDto {
  /**
   * Where events are forwarded: an absolute https:// URL (at most 2048 characters). Loopback, private and
   * link-local addresses are refused unless the server allows private networks.
   * @example https://api.example.com/webhooks/stripe
   */
  @Trim()
  @IsAbsoluteHttpsUrl()
  url!: string;

  /** Signing secret (1 to 256 characters) for the hooktrail-signature header; omitted or null: unsigned. */
  @ValidateIf((_dto, value) => value !== undefined && value !== null)
  @IsString({ message: 'secret must be a string or null' })
  @Length(1, SECRET_MAX_LENGTH, { message: `secret must be 1 to ${SECRET_MAX_LENGTH} characters` })
  secret?: string | null;
}
