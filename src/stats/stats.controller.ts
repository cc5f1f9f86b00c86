import { Controller, Get, Param, Query } from '@nestjs/common';
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
import { EndpointStatsDto } from './dto/endpoint-stats.dto';
import { StatsQuery } from './dto/stats.query';
import { StatsService } from './stats.service';

@ApiTags('stats')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@Controller('api/endpoints/:id/stats')
export class StatsController {
  constructor(private readonly stats: StatsService) {}

  @Get()
  @Can('endpoint.read', 'endpoint')
  @ApiOperation({
    summary: "An endpoint's events per bucket by status, and its destinations' attempts, over a window",
  })
  @ApiOkResponse({ type: EndpointStatsDto })
  @ApiBadRequestResponse({ description: 'window is not one of 1h, 24h, 7d, 30d' })
  @ApiNotFoundResponse({ description: 'No such endpoint (or it is not yours)' })
  get(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Query() query: StatsQuery,
  ): Promise<EndpointStatsDto> {
    return this.stats.forEndpoint(endpointId, query.window);
  }
}
