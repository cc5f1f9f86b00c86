import { Body, Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { OkDto } from '../common/dto/ok.dto';
import type { Grant } from '../access/access.repository';
import { Can } from '../access/can.decorator';
import { CurrentGrant } from '../access/current-grant.decorator';
import { ResourceIdPipe } from '../common/pipes/resource-id.pipe';
import { DestinationsService } from './destinations.service';
import { CreateDestinationDto } from './dto/create-destination.dto';
import { DestinationListResponseDto, DestinationResponseDto } from './dto/destination.dto';
import { UpdateDestinationDto } from './dto/update-destination.dto';

const URL_RULES =
  'A field is invalid or not allowed: url must be an absolute https:// URL, not a loopback, private or ' +
  'link-local address; secret 1 to 256 characters or null; rate_limit 1 to 100000 or null; ' +
  'rate_limit_period "second" or "minute"; max_in_flight 1 to 1000 or null; auto_pause_after 1 to 10000 ' +
  'or null; paused and is_active booleans';

@ApiTags('destinations')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@Controller('api/endpoints/:id/destinations')
export class DestinationsController {
  constructor(private readonly destinations: DestinationsService) {}

  @Get()
  @Can('endpoint.read', 'endpoint')
  @ApiOperation({ summary: "List an endpoint's destinations, oldest first" })
  @ApiOkResponse({ type: DestinationListResponseDto })
  @ApiNotFoundResponse({ description: 'No such endpoint (or it is not yours)' })
  async list(
    @CurrentGrant() grant: Grant,
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
  ): Promise<DestinationListResponseDto> {
    return { destinations: await this.destinations.list(grant, endpointId) };
  }

  @Post()
  @Can('endpoint.write', 'endpoint')
  @ApiOperation({ summary: 'Add a destination: later events are forwarded to it too' })
  @ApiCreatedResponse({ type: DestinationResponseDto })
  @ApiBadRequestResponse({ description: URL_RULES })
  @ApiNotFoundResponse({ description: 'No such endpoint (or it is not yours)' })
  async create(
    @CurrentGrant() grant: Grant,
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Body() body: CreateDestinationDto,
  ): Promise<DestinationResponseDto> {
    return { destination: await this.destinations.create(grant, endpointId, body) };
  }

  @Get(':dId')
  @Can('endpoint.read', 'endpoint')
  @ApiOperation({ summary: 'Get one destination, with its backlog' })
  @ApiOkResponse({ type: DestinationResponseDto })
  @ApiNotFoundResponse({ description: 'No such endpoint or destination (or not yours)' })
  async get(
    @CurrentGrant() grant: Grant,
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('dId', new ResourceIdPipe('destination')) id: string,
  ): Promise<DestinationResponseDto> {
    return { destination: await this.destinations.get(grant, endpointId, id) };
  }

  @Patch(':dId')
  @Can('endpoint.write', 'endpoint')
  @ApiOperation({
    summary:
      'Change a destination: url, secret, is_active, its limits and order, or pause/resume it (only the fields sent)',
    description:
      'paused: true holds its deliveries (no attempt, no retry used up); paused: false sends the backlog ' +
      'within its limits. rate_limit and max_in_flight hold across all worker processes. ordering: fifo ' +
      'sends one attempt at a time in capture order, a failing delivery blocking those after it. ' +
      'auto_pause_after: it pauses itself after that many consecutive failed attempts (paused_reason says ' +
      'so); resuming clears paused_reason and the count.',
  })
  @ApiOkResponse({ type: DestinationResponseDto })
  @ApiBadRequestResponse({ description: URL_RULES })
  @ApiNotFoundResponse({ description: 'No such endpoint or destination (or not yours)' })
  async update(
    @CurrentGrant() grant: Grant,
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('dId', new ResourceIdPipe('destination')) id: string,
    @Body() body: UpdateDestinationDto,
  ): Promise<DestinationResponseDto> {
    return { destination: await this.destinations.update(grant, endpointId, id, body) };
  }

  @Delete(':dId')
  @Can('endpoint.write', 'endpoint')
  @ApiOperation({ summary: 'Remove a destination; deliveries already made or in flight are unaffected' })
  @ApiOkResponse({ type: OkDto })
  @ApiNotFoundResponse({ description: 'No such endpoint or destination (or not yours)' })
  async remove(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('dId', new ResourceIdPipe('destination')) id: string,
  ): Promise<OkDto> {
    await this.destinations.remove(endpointId, id);
    return { ok: true };
  }
}
