import { ApiProperty } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsIn,
  IsString,
  isEmail,
  registerDecorator,
  type ValidationArguments,
} from 'class-validator';
import { isAbsoluteHttpsUrl, URL_MAX_LENGTH } from '../../common/dto/https-url';
import { Trim } from '../../common/dto/fields';
import { CHANNEL_TYPES, type ChannelStatus, type ChannelType } from '../notification-channel';
import { NOTIFICATION_EVENT_TYPES, type NotificationEventType } from '../notification-events';

const CHANNEL_STATUSES: ChannelStatus[] = ['ok', 'failing', 'disabled'];
/** The longest address RFC 5321 lets through. */
const EMAIL_MAX_LENGTH = 254;

/** An email address (at most 254 characters) for an `email` channel, an absolute https:// URL otherwise. */
function IsChannelTarget(): PropertyDecorator {
  const isEmailChannel = (args?: ValidationArguments) =>
    (args?.object as Partial<CreateNotificationChannelDto>).type === 'email';
  return (target, propertyName) =>
    registerDecorator({
      name: 'isChannelTarget',
      target: target.constructor,
      propertyName: String(propertyName),
      options: {
        message: (args) =>
          isEmailChannel(args)
            ? `target must be an email address (at most ${EMAIL_MAX_LENGTH} characters) for an email channel`
            : `target must be an absolute https:// URL (at most ${URL_MAX_LENGTH} characters) for a slack, discord or webhook channel`,
      },
      validator: {
        validate: (value: unknown, args) =>
          isEmailChannel(args)
            ? typeof value === 'string' && value.length <= EMAIL_MAX_LENGTH && isEmail(value)
            : isAbsoluteHttpsUrl(value),
      },
    });
}

export class CreateNotificationChannelDto {
  @ApiProperty({ enum: CHANNEL_TYPES, example: 'slack' })
  @IsIn(CHANNEL_TYPES, { message: `type must be one of ${CHANNEL_TYPES.join(', ')}` })
  type!: ChannelType;

  /**
   * For `email` an email address; for `slack`, `discord` and `webhook` an absolute https:// URL (a Slack or
   * Discord incoming-webhook URL, or your own receiver). Private addresses are refused unless the server
   * allows private networks.
   * @example https://hooks.slack.com/services/T000/B000/XXXX
   */
  @Trim()
  @IsString({ message: 'target must be a string' })
  @IsChannelTarget()
  target!: string;

  /** What the channel is told about: a non-empty set of event types. */
  @ApiProperty({
    enum: NOTIFICATION_EVENT_TYPES,
    isArray: true,
    minItems: 1,
    uniqueItems: true,
    example: ['dead_letter', 'issue.opened'],
  })
  @IsArray({ message: 'events must be an array' })
  @ArrayNotEmpty({ message: 'events must name at least one event type' })
  @ArrayMaxSize(NOTIFICATION_EVENT_TYPES.length, {
    message: `events must have at most ${NOTIFICATION_EVENT_TYPES.length} items`,
  })
  @ArrayUnique({ message: 'events must not repeat an event type' })
  @IsIn(NOTIFICATION_EVENT_TYPES, {
    each: true,
    message: `events must each be one of ${NOTIFICATION_EVENT_TYPES.join(', ')}`,
  })
  events!: NotificationEventType[];
}

export class NotificationChannelDto {
  id!: string;
  @ApiProperty({ enum: CHANNEL_TYPES })
  type!: ChannelType;
  /** The email address or https:// URL messages go to. */
  target!: string;
  @ApiProperty({ enum: NOTIFICATION_EVENT_TYPES, isArray: true })
  events!: NotificationEventType[];
  /**
   * `ok`: messages go through; `failing`: the last message was dropped after every retry (see last_error);
   * `disabled`: dropped too many times in a row, nothing is sent until a test message goes through.
   */
  @ApiProperty({ enum: CHANNEL_STATUSES })
  status!: ChannelStatus;
  /** Why the last attempt failed (a retry may still be coming); null once a message went through. */
  last_error!: string | null;
  /** When a message (or a test) last went through. */
  last_sent_at!: string | null;
  /** When the channel started dropping messages; null while it is `ok`. */
  failing_since!: string | null;
  created_at!: string;
  /**
   * A webhook channel's signing secret ("whsec_..."), in the answer to its creation only: null in every
   * other answer (a read-only API key, which cannot create a channel, never sees one), and for other
   * types. Messages carry hooktrail-id, hooktrail-timestamp and hooktrail-signature as forwarded webhooks do.
   */
  secret!: string | null;
  /** Whether the channel has a signing secret (every `webhook` channel does), for every caller. */
  secret_set!: boolean;
}

export class CreatedNotificationChannelResponseDto {
  /** With its `secret` when it is a webhook channel: shown this once. */
  channel!: NotificationChannelDto;
}

export class NotificationChannelResponseDto {
  channel!: NotificationChannelDto;
}

export class NotificationChannelListResponseDto {
  channels!: NotificationChannelDto[];
}

export class NotificationTestResultDto {
  /** Whether the channel took the test message (a 2xx answer, or the mail server accepted it). */
  ok!: boolean;
  /** Why it did not; null when it did. */
  error!: string | null;
}
