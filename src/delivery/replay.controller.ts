import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Can } from '../access/can.decorator';
import { ResourceIdPipe } from '../common/pipes/resource-id.pipe';
import { ReplayService } from './replay.service';

class ReplayResultDto {
  @ApiProperty({ example: true })
  ok!: true;

  @ApiProperty({ description: 'Reference of this dispatch; new for every replay' })
  jobId!: string;
}

@ApiTags('events')
@ApiBearerAuth()
@Controller('api/endpoints/:id/events/:eId')
export class ReplayController {
  constructor(private readonly replays: ReplayService) {}

  @Post('replay')
  @Can('endpoint.write', 'endpoint')
  @HttpCode(200)
  @ApiOperation({ summary: "Replay an event to the endpoint's currently active destinations" })
  @ApiOkResponse({ type: ReplayResultDto })
  @ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
  @ApiNotFoundResponse({ description: 'No such endpoint or event (or not yours)' })
  @ApiConflictResponse({ description: 'The endpoint has no active destination' })
  replay(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('eId', new ResourceIdPipe('event')) eventId: string,
  ): Promise<ReplayResultDto> {
    return this.replays.replay(endpointId, eventId);
  }
}
