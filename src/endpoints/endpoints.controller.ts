import { Body, Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Grant } from '../access/access.repository';
import { Can } from '../access/can.decorator';
import { CurrentGrant } from '../access/current-grant.decorator';
import { OkDto } from '../common/dto/ok.dto';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ResourceIdPipe } from '../common/pipes/resource-id.pipe';
import { CreateEndpointDto } from './dto/create-endpoint.dto';
import { EndpointDetailResponseDto, EndpointListResponseDto, EndpointResponseDto } from './dto/endpoint.dto';
import { UpdateEndpointDto } from './dto/update-endpoint.dto';
import { EndpointsService } from './endpoints.service';

const NOT_FOUND = { description: "No such endpoint (or not yours, nor your team's)" };

@ApiTags('endpoints')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@Controller('api/endpoints')
export class EndpointsController {
  constructor(private readonly endpoints: EndpointsService) {}

  @Get()
  @ApiOperation({ summary: "List your endpoints and your teams', newest first" })
  @ApiOkResponse({ type: EndpointListResponseDto })
  async list(@CurrentUser() user: AuthUser): Promise<EndpointListResponseDto> {
    return { endpoints: await this.endpoints.list(user) };
  }

  @Post()
  @ApiOperation({ summary: 'Create an endpoint; its capture URL works at once' })
  @ApiCreatedResponse({ type: EndpointResponseDto })
  @ApiBadRequestResponse({ description: 'A field is invalid: the message names it' })
  @ApiNotFoundResponse({ description: 'team_id names no team of yours' })
  @ApiForbiddenResponse({ description: 'Your role in that team is viewer' })
  async create(@CurrentUser() user: AuthUser, @Body() body: CreateEndpointDto): Promise<EndpointResponseDto> {
    return { endpoint: await this.endpoints.create(user, body) };
  }

  @Get(':id')
  @Can('endpoint.read', 'endpoint')
  @ApiOperation({ summary: 'Get an endpoint with its destinations' })
  @ApiOkResponse({ type: EndpointDetailResponseDto })
  @ApiNotFoundResponse(NOT_FOUND)
  async get(
    @CurrentGrant() grant: Grant,
    @Param('id', new ResourceIdPipe('endpoint')) id: string,
  ): Promise<EndpointDetailResponseDto> {
    return { endpoint: await this.endpoints.get(grant, id) };
  }

  @Patch(':id')
  @Can('endpoint.write', 'endpoint')
  @ApiOperation({
    summary: 'Change an endpoint (only the fields sent), or move it into a team or back to you (team_id)',
  })
  @ApiOkResponse({ type: EndpointResponseDto })
  @ApiBadRequestResponse({ description: 'A field is invalid or not allowed' })
  @ApiNotFoundResponse(NOT_FOUND)
  async update(
    @CurrentUser() user: AuthUser,
    @CurrentGrant() grant: Grant,
    @Param('id', new ResourceIdPipe('endpoint')) id: string,
    @Body() body: UpdateEndpointDto,
  ): Promise<EndpointResponseDto> {
    return { endpoint: await this.endpoints.update(user, grant, id, body) };
  }

  @Delete(':id')
  @Can('endpoint.write', 'endpoint')
  @ApiOperation({ summary: 'Delete an endpoint with its destinations, events and deliveries' })
  @ApiOkResponse({ type: OkDto })
  @ApiNotFoundResponse(NOT_FOUND)
  async remove(@Param('id', new ResourceIdPipe('endpoint')) id: string): Promise<OkDto> {
    await this.endpoints.remove(id);
    return { ok: true };
  }
}
