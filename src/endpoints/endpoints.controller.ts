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
import { OkDto } from '../auth/dto/auth.dto';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ResourceIdPipe } from '../common/pipes/resource-id.pipe';
import { CreateEndpointDto } from './dto/create-endpoint.dto';
import { EndpointDetailResponseDto, EndpointListResponseDto, EndpointResponseDto } from './dto/endpoint.dto';
import { UpdateEndpointDto } from './dto/update-endpoint.dto';
import { EndpointsService } from './endpoints.service';

const NOT_FOUND = { description: 'No such endpoint (or it is not yours)' };

@ApiTags('endpoints')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@Controller('api/endpoints')
export class EndpointsController {
  constructor(private readonly endpoints: EndpointsService) {}

  @Get()
  @ApiOperation({ summary: 'List your endpoints, newest first' })
  @ApiOkResponse({ type: EndpointListResponseDto })
  async list(@CurrentUser() user: AuthUser): Promise<EndpointListResponseDto> {
    return { endpoints: await this.endpoints.list(user.id) };
  }

  @Post()
  @ApiOperation({ summary: 'Create an endpoint; its capture URL works at once' })
  @ApiCreatedResponse({ type: EndpointResponseDto })
  @ApiBadRequestResponse({ description: 'name is missing, not a string, or not 1 to 200 characters' })
  async create(@CurrentUser() user: AuthUser, @Body() body: CreateEndpointDto): Promise<EndpointResponseDto> {
    return { endpoint: await this.endpoints.create(user.id, body) };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get an endpoint with its destinations' })
  @ApiOkResponse({ type: EndpointDetailResponseDto })
  @ApiNotFoundResponse(NOT_FOUND)
  async get(
    @CurrentUser() user: AuthUser,
    @Param('id', new ResourceIdPipe('endpoint')) id: string,
  ): Promise<EndpointDetailResponseDto> {
    return { endpoint: await this.endpoints.get(user.id, id) };
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change the name, is_active or metadata of an endpoint (only the fields sent)' })
  @ApiOkResponse({ type: EndpointResponseDto })
  @ApiBadRequestResponse({ description: 'A field is invalid or not allowed' })
  @ApiNotFoundResponse(NOT_FOUND)
  async update(
    @CurrentUser() user: AuthUser,
    @Param('id', new ResourceIdPipe('endpoint')) id: string,
    @Body() body: UpdateEndpointDto,
  ): Promise<EndpointResponseDto> {
    return { endpoint: await this.endpoints.update(user.id, id, body) };
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Delete an endpoint with its destinations, events and deliveries' })
  @ApiOkResponse({ type: OkDto })
  @ApiNotFoundResponse(NOT_FOUND)
  async remove(
    @CurrentUser() user: AuthUser,
    @Param('id', new ResourceIdPipe('endpoint')) id: string,
  ): Promise<OkDto> {
    await this.endpoints.remove(user.id, id);
    return { ok: true };
  }
}
