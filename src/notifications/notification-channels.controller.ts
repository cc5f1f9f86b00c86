import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { Throttle } from '@nestjs/throttler';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { OkDto } from '../common/dto/ok.dto';
import { Can } from '../access/can.decorator';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { UserThrottlerGuard } from '../common/guards/user-throttler.guard';
import { ResourceIdPipe } from '../common/pipes/resource-id.pipe';
import {
  CreatedNotificationChannelResponseDto,
  CreateNotificationChannelDto,
  NotificationChannelListResponseDto,
  NotificationChannelResponseDto,
  NotificationTestResultDto,
} from './dto/notification-channel.dto';
import { MAX_NOTIFICATION_CHANNELS, NotificationChannelsService } from './notification-channels.service';

/** Test messages a user may send a minute, all channels together: each goes to the channel's target. */
export const CHANNEL_TESTS_PER_MIN = 10;

@ApiTags('notification-channels')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@Controller('api/notification-channels')
export class NotificationChannelsController {
  constructor(private readonly channels: NotificationChannelsService) {}

  @Post()
  @ApiOperation({
    summary:
      'Add a notification channel (email, Slack, Discord or a signed webhook) for the event types chosen; a webhook channel’s secret is in this answer only',
  })
  @ApiCreatedResponse({ type: CreatedNotificationChannelResponseDto })
  @ApiBadRequestResponse({ description: 'type, target or events is invalid (the message names the field)' })
  @ApiConflictResponse({ description: `You already have ${MAX_NOTIFICATION_CHANNELS} notification channels` })
  async create(
    @CurrentUser() user: AuthUser,
    @Body() body: CreateNotificationChannelDto,
  ): Promise<CreatedNotificationChannelResponseDto> {
    return { channel: await this.channels.create(user.id, body) };
  }

  @Get()
  @ApiOperation({ summary: 'List your notification channels with their health (status, last_error)' })
  @ApiOkResponse({ type: NotificationChannelListResponseDto })
  async list(@CurrentUser() user: AuthUser): Promise<NotificationChannelListResponseDto> {
    return { channels: await this.channels.list(user.id) };
  }

  @Get(':cid')
  @Can('account.manage', 'notification_channel', 'cid')
  @ApiOperation({ summary: 'One notification channel with its health (status, last_error)' })
  @ApiOkResponse({ type: NotificationChannelResponseDto })
  @ApiNotFoundResponse({ description: 'No such notification channel (or it is not yours)' })
  async get(
    @CurrentUser() user: AuthUser,
    @Param('cid', new ResourceIdPipe('notification channel')) channelId: string,
  ): Promise<NotificationChannelResponseDto> {
    return { channel: await this.channels.get(user.id, channelId) };
  }

  @Delete(':cid')
  @Can('account.manage', 'notification_channel', 'cid')
  @ApiOperation({ summary: 'Delete a notification channel; what was waiting for it is dropped' })
  @ApiOkResponse({ type: OkDto })
  @ApiNotFoundResponse({ description: 'No such notification channel (or it is not yours)' })
  async remove(
    @CurrentUser() user: AuthUser,
    @Param('cid', new ResourceIdPipe('notification channel')) channelId: string,
  ): Promise<OkDto> {
    await this.channels.remove(user.id, channelId);
    return { ok: true };
  }

  @Post(':cid/test')
  @Can('account.manage', 'notification_channel', 'cid')
  @UseGuards(UserThrottlerGuard)
  @Throttle({ default: { limit: CHANNEL_TESTS_PER_MIN, ttl: 60_000 } })
  @ApiTooManyRequestsResponse({ description: `More than ${CHANNEL_TESTS_PER_MIN} tests in a minute` })
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Send a test message now and answer whether the channel took it; one that does makes a failing or disabled channel healthy again',
  })
  @ApiOkResponse({ type: NotificationTestResultDto })
  @ApiNotFoundResponse({ description: 'No such notification channel (or it is not yours)' })
  test(
    @CurrentUser() user: AuthUser,
    @Param('cid', new ResourceIdPipe('notification channel')) channelId: string,
  ): Promise<NotificationTestResultDto> {
    return this.channels.test(user.id, channelId);
  }
}
