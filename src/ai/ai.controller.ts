import { Body, Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import { Can } from '../access/can.decorator';
import { ResourceIdPipe } from '../common/pipes/resource-id.pipe';
import { RequiresPlan } from '../access/requires-plan.decorator';
import { AI_RATE_LIMIT_PER_MIN, HANDLER_FRAMEWORKS } from './ai.types';
import { AiService } from './ai.service';
import { DiagnosisDto, ExplanationDto, HandlerDto, HandlerRequestDto, SchemaDto } from './dto/ai.dto';
import { UserThrottlerGuard } from '../common/guards/user-throttler.guard';

@ApiTags('ai')
@ApiBearerAuth()
@Can('endpoint.read', 'endpoint')
@RequiresPlan('starter')
@UseGuards(UserThrottlerGuard)
@Throttle({ default: { limit: AI_RATE_LIMIT_PER_MIN, ttl: 60_000 } })
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@ApiNotFoundResponse({ description: 'No such endpoint or event (or not yours)' })
@ApiTooManyRequestsResponse({ description: `More than ${AI_RATE_LIMIT_PER_MIN} AI calls in a minute` })
@Controller('api/endpoints/:id/events/:eId/ai')
export class AiController {
  constructor(private readonly ai: AiService) {}

  @Get('explain')
  @ApiOperation({ summary: 'Explain the event in 2 to 3 plain-English sentences' })
  @ApiOkResponse({ type: ExplanationDto })
  async explain(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('eId', new ResourceIdPipe('event')) eventId: string,
  ): Promise<ExplanationDto> {
    const answer = await this.ai.explain(endpointId, eventId);
    return { explanation: answer.text, provider: answer.provider };
  }

  @Get('schema')
  @ApiOperation({ summary: "TypeScript interfaces of the event's payload" })
  @ApiOkResponse({ type: SchemaDto })
  async schema(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('eId', new ResourceIdPipe('event')) eventId: string,
  ): Promise<SchemaDto> {
    const answer = await this.ai.schema(endpointId, eventId);
    return { schema: answer.text, provider: answer.provider };
  }

  @Post('handler')
  @HttpCode(200)
  @ApiOperation({ summary: 'Handler code for the event that verifies the hooktrail-signature' })
  @ApiOkResponse({ type: HandlerDto })
  @ApiBadRequestResponse({
    description: 'Unknown language or framework, or a pair that does not go together',
  })
  async handler(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('eId', new ResourceIdPipe('event')) eventId: string,
    @Body() body: HandlerRequestDto,
  ): Promise<HandlerDto> {
    const language = body.language ?? 'typescript';
    const framework = body.framework ?? HANDLER_FRAMEWORKS[language][0];
    const answer = await this.ai.handler(endpointId, eventId, { language, framework });
    return { handler: answer.text, provider: answer.provider };
  }

  @Get('diagnose')
  @ApiOperation({ summary: 'Why delivering the event failed, and how to fix it' })
  @ApiOkResponse({ type: DiagnosisDto })
  async diagnose(
    @Param('id', new ResourceIdPipe('endpoint')) endpointId: string,
    @Param('eId', new ResourceIdPipe('event')) eventId: string,
  ): Promise<DiagnosisDto> {
    const answer = await this.ai.diagnose(endpointId, eventId);
    return { diagnosis: answer.text, provider: answer.provider };
  }
}
