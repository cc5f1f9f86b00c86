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
  @ApiOperation({
    summary: 'Replay an event to the active destinations that would receive it were it captured now',
    description:
      "A destination whose filter does not match the stored request is left out, as at capture; so is every destination when the event's signature failed and the endpoint enforces verification.",
  })
  @ApiOkResponse({ type: ReplayResultDto })
  @ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
  @ApiNotFoundResponse({ description: 'No such endpoint or event (or not yours)' })
  @ApiConflictResponse({
    description:
      'The endpoint has no active destination, or none would receive this event (each one named with why)',
  })
  replay(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('eId', new ResourceIdPipe('event')) eventId: string,
  ): Promise<ReplayResultDto> {
    return this.replays.replay(endpointId, eventId);
  }
}
