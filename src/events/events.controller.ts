import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Can } from '../access/can.decorator';
import { ResourceIdPipe } from '../common/pipes/resource-id.pipe';
import { DeliveryListResponseDto, EventListResponseDto, EventResponseDto } from './dto/event.dto';
import { ListEventsQuery } from './dto/list-events.query';
import { EventRoutingResponseDto, FilterVerdictDto, TestFilterDto } from './dto/routing.dto';
import { EventsService } from './events.service';

@ApiTags('events')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@Controller('api/endpoints/:id/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @Can('endpoint.read', 'endpoint')
  @ApiOperation({ summary: "List an endpoint's captured events, newest first, with filters and pages" })
  @ApiOkResponse({ type: EventListResponseDto })
  @ApiBadRequestResponse({
    description: 'status, from, to, q, page or limit is invalid (the message names it)',
  })
  @ApiNotFoundResponse({ description: 'No such endpoint (or it is not yours)' })
  list(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Query() query: ListEventsQuery,
  ): Promise<EventListResponseDto> {
    return this.events.list(endpointId, query);
  }

  @Get(':eId')
  @Can('endpoint.read', 'endpoint')
  @ApiOperation({ summary: 'Get one captured event with its deliveries' })
  @ApiOkResponse({ type: EventResponseDto })
  @ApiNotFoundResponse({ description: 'No such endpoint or event (or not yours)' })
  async get(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('eId', new ResourceIdPipe('event')) eventId: string,
  ): Promise<EventResponseDto> {
    return { event: await this.events.get(endpointId, eventId) };
  }

  @Get(':eId/deliveries')
  @Can('endpoint.read', 'endpoint')
  @ApiOperation({ summary: "List an event's deliveries (one per destination and dispatch), newest first" })
  @ApiOkResponse({ type: DeliveryListResponseDto })
  @ApiNotFoundResponse({ description: 'No such endpoint or event (or not yours)' })
  async deliveries(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('eId', new ResourceIdPipe('event')) eventId: string,
  ): Promise<DeliveryListResponseDto> {
    return { deliveries: await this.events.listDeliveries(endpointId, eventId) };
  }

  @Get(':eId/routing')
  @Can('endpoint.read', 'endpoint')
  @ApiOperation({
    summary: 'Which destinations the event would be delivered to if it were captured now, and why not',
  })
  @ApiOkResponse({ type: EventRoutingResponseDto })
  @ApiNotFoundResponse({ description: 'No such endpoint or event (or not yours)' })
  routing(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('eId', new ResourceIdPipe('event')) eventId: string,
  ): Promise<EventRoutingResponseDto> {
    return this.events.routing(endpointId, eventId);
  }

  @Post(':eId/filter-test')
  @Can('endpoint.read', 'endpoint')
  @HttpCode(200)
  @ApiOperation({ summary: 'Try a destination filter on the event (nothing is saved or sent)' })
  @ApiOkResponse({ type: FilterVerdictDto })
  @ApiBadRequestResponse({ description: 'The filter is not a valid rule (the message names its path)' })
  @ApiNotFoundResponse({ description: 'No such endpoint or event (or not yours)' })
  testFilter(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('eId', new ResourceIdPipe('event')) eventId: string,
    @Body() body: TestFilterDto,
  ): Promise<FilterVerdictDto> {
    return this.events.testFilter(endpointId, eventId, body.filter);
  }
}
