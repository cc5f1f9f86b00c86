import { ConflictException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomBytes, randomUUID } from 'node:crypto';
import { assertPublicHost } from '../common/network/private-address';
import type { Environment } from '../config/environment';
import type { SecretBox } from '../secrets/secret-box';
import { SECRET_BOX } from '../secrets/secrets.module';
import { testMessage } from './channel-messages';
import { ChannelSender } from './channel-sender.service';
import type {
  CreateNotificationChannelDto,
  NotificationChannelDto,
  NotificationTestResultDto,
} from './dto/notification-channel.dto';
import type { NotificationChannel } from './notification-channel';
import { NotificationsRepository } from './notifications.repository';

/** Channels one user may have: enough for a few teams' chats and inboxes, few enough to bound a fan-out. */
export const MAX_NOTIFICATION_CHANNELS = 20;
const CHANNEL_NOT_FOUND = 'notification channel not found';

/** A channel as every answer but its creation's shows it: whether it has a secret, never the secret. */
function toDto(channel: NotificationChannel): NotificationChannelDto {
  return {
    id: channel.id,
    type: channel.type,
    target: channel.target,
    events: channel.events,
    status: channel.status,
    last_error: channel.lastError,
    last_sent_at: channel.lastSentAt?.toISOString() ?? null,
    failing_since: channel.failingSince?.toISOString() ?? null,
    created_at: channel.createdAt.toISOString(),
    secret: null,
    secret_set: channel.sealedSecret !== null,
  };
}

/** A user's notification channels. */
@Injectable()
export class NotificationChannelsService {
  private readonly allowPrivateNetworks: boolean;

  constructor(
    private readonly channels: NotificationsRepository,
    private readonly sender: ChannelSender,
    @Inject(SECRET_BOX) private readonly secrets: SecretBox,
    config: ConfigService<Environment, true>,
  ) {
    this.allowPrivateNetworks = config.get('DELIVERY_ALLOW_PRIVATE_NETWORKS', { infer: true });
  }

  async create(userId: string, input: CreateNotificationChannelDto): Promise<NotificationChannelDto> {
    if (input.type !== 'email') assertPublicHost(input.target, 'target', this.allowPrivateNetworks);
    if ((await this.channels.countOwned(userId)) >= MAX_NOTIFICATION_CHANNELS)
      throw new ConflictException(
        `you have ${MAX_NOTIFICATION_CHANNELS} notification channels, the most allowed: delete one first`,
      );
    // 24 random bytes: the strength of the Standard Webhooks secrets the providers issue.
    const secret = input.type === 'webhook' ? `whsec_${randomBytes(24).toString('base64')}` : null;
    const channel = await this.channels.create({
      userId,
      type: input.type,
      target: input.target,
      events: input.events,
      sealedSecret: secret === null ? null : this.secrets.seal(secret),
    });
    return { ...toDto(channel), secret };
  }

  async list(userId: string): Promise<NotificationChannelDto[]> {
    return (await this.channels.listOwned(userId)).map(toDto);
  }

  async get(userId: string, id: string): Promise<NotificationChannelDto> {
    return toDto(await this.owned(userId, id));
  }

  async remove(userId: string, id: string): Promise<void> {
    if (!(await this.channels.deleteOwned(userId, id))) throw new NotFoundException(CHANNEL_NOT_FOUND);
  }

  /**
   * Sends a test message at once, outside the queue and the digest window, and answers what happened. One
   * that goes through makes a failing or disabled channel healthy again.
   */
  async test(userId: string, id: string): Promise<NotificationTestResultDto> {
    const channel = await this.owned(userId, id);
    try {
      await this.sender.send(channel, testMessage(channel.id), `test_${randomUUID()}`);
    } catch (error) {
      const message = (error as Error).message;
      await this.channels.recordError(channel.id, message);
      return { ok: false, error: message };
    }
    await this.channels.recordTestSent(channel.id);
    return { ok: true, error: null };
  }

  private async owned(userId: string, id: string): Promise<NotificationChannel> {
    const channel = await this.channels.findOwned(userId, id);
    if (!channel) throw new NotFoundException(CHANNEL_NOT_FOUND);
    return channel;
  }
}
