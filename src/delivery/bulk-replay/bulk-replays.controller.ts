import { Body, Controller, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Can } from '../../access/can.decorator';
import { ResourceIdPipe } from '../../common/pipes/resource-id.pipe';
import {
  BulkReplayCountDto,
  BulkReplayListResponseDto,
  BulkReplayResponseDto,
  CreateBulkReplayDto,
} from './bulk-replay.dto';
import { BulkReplaysService } from './bulk-replays.service';

const NOT_FOUND = { description: 'No such endpoint or bulk replay (or not yours)' };

@ApiTags('events')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@Controller('api/endpoints/:id/bulk-replays')
export class BulkReplaysController {
  constructor(private readonly replays: BulkReplaysService) {}

  @Post()
  @Can('endpoint.write', 'endpoint')
  @HttpCode(202)
  @ApiOperation({
    summary:
      'Replay every event matching the filters (those of the events list), oldest first, or count them (dry_run)',
  })
  @ApiOkResponse({ description: 'dry_run: the events that match now', type: BulkReplayCountDto })
  @ApiAcceptedResponse({ description: 'The bulk replay, running', type: BulkReplayResponseDto })
  @ApiBadRequestResponse({ description: 'A filter is invalid, or a field is not allowed' })
  @ApiNotFoundResponse({ description: 'No such endpoint (or it is not yours)' })
  @ApiConflictResponse({ description: 'The endpoint has no active destination' })
  async create(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Body() body: CreateBulkReplayDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<BulkReplayResponseDto | BulkReplayCountDto> {
    if (body.dry_run) {
      reply.status(200);
      return { count: await this.replays.count(endpointId, body) };
    }
    return { bulk_replay: await this.replays.create(endpointId, body) };
  }

  @Get()
  @Can('endpoint.read', 'endpoint')
  @ApiOperation({ summary: "An endpoint's bulk replays, newest first" })
  @ApiOkResponse({ type: BulkReplayListResponseDto })
  @ApiNotFoundResponse({ description: 'No such endpoint (or it is not yours)' })
  async list(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
  ): Promise<BulkReplayListResponseDto> {
    return { bulk_replays: await this.replays.list(endpointId) };
  }

  @Get(':rId')
  @Can('endpoint.read', 'endpoint')
  @ApiOperation({ summary: 'One bulk replay, with its progress (done of total)' })
  @ApiOkResponse({ type: BulkReplayResponseDto })
  @ApiNotFoundResponse(NOT_FOUND)
  async get(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('rId', new ResourceIdPipe('bulk replay')) id: string,
  ): Promise<BulkReplayResponseDto> {
    return { bulk_replay: await this.replays.get(endpointId, id) };
  }

  @Post(':rId/cancel')
  @Can('endpoint.write', 'endpoint')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Stop a running bulk replay: what was already dispatched stays (a finished one is returned as it is)',
  })
  @ApiOkResponse({ type: BulkReplayResponseDto })
  @ApiNotFoundResponse(NOT_FOUND)
  async cancel(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('rId', new ResourceIdPipe('bulk replay')) id: string,
  ): Promise<BulkReplayResponseDto> {
    return { bulk_replay: await this.replays.cancel(endpointId, id) };
  }
}
