import { Controller, Get, Headers, Param, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiOkResponse,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Grant } from '../access/access.repository';
import { Can } from '../access/can.decorator';
import { CurrentGrant } from '../access/current-grant.decorator';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ResourceIdPipe } from '../common/pipes/resource-id.pipe';
import { EventStreamGateway } from './event-stream.gateway';

@ApiTags('events')
@ApiBearerAuth()
@Controller('api/endpoints/:id/events/stream')
export class EventStreamController {
  constructor(private readonly gateway: EventStreamGateway) {}

  /**
   * Server-Sent Events of the endpoint's new events (`event.created`) and status changes
   * (`event.updated`), each with an `id:`; reconnect with `Last-Event-ID` to resume without gaps
   * (changes are kept 10 minutes). A `: heartbeat` comment every 15 s keeps proxies from closing it.
   */
  @Get()
  @Can('endpoint.read', 'endpoint')
  @ApiOperation({
    summary: "Live stream (Server-Sent Events) of the endpoint's new events and status changes",
  })
  @ApiProduces('text/event-stream')
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'Resume after this change id' })
  @ApiOkResponse({
    description: 'text/event-stream of `event.created` and `event.updated` messages',
    schema: { type: 'string' },
  })
  @ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
  @ApiNotFoundResponse({ description: 'No such endpoint (or not yours)' })
  async stream(
    @CurrentUser() user: AuthUser,
    @CurrentGrant() grant: Grant,
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.gateway.connect(user, grant, endpointId, lastEventId, request, reply);
  }
}
