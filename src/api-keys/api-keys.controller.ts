import { Body, Controller, Delete, Get, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { OkDto } from '../common/dto/ok.dto';
import { NotForApiKeys } from '../access/not-for-api-keys.decorator';
import { Can } from '../access/can.decorator';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ResourceIdPipe } from '../common/pipes/resource-id.pipe';
import { ApiKeysService, MAX_API_KEYS } from './api-keys.service';
import { ApiKeyListResponseDto, CreateApiKeyDto, CreatedApiKeyResponseDto } from './dto/api-key.dto';

@ApiTags('api-keys')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@NotForApiKeys()
@Controller('api/api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @ApiOperation({
    summary: 'Create an API key for scripts, CI and the hooktrail CLI: the key is in this answer only',
  })
  @ApiCreatedResponse({ type: CreatedApiKeyResponseDto })
  @ApiBadRequestResponse({ description: 'name, scope or expires_at is invalid, or expires_at is past' })
  @ApiConflictResponse({ description: `You already have ${MAX_API_KEYS} API keys` })
  create(@CurrentUser() user: AuthUser, @Body() body: CreateApiKeyDto): Promise<CreatedApiKeyResponseDto> {
    return this.apiKeys.create(user.id, body);
  }

  @Get()
  @ApiOperation({ summary: 'List your API keys, newest first (never the keys themselves)' })
  @ApiOkResponse({ type: ApiKeyListResponseDto })
  async list(@CurrentUser() user: AuthUser): Promise<ApiKeyListResponseDto> {
    return { api_keys: await this.apiKeys.list(user.id) };
  }

  @Delete(':kid')
  @Can('account.manage', 'api_key', 'kid')
  @ApiOperation({ summary: 'Revoke an API key: requests made with it are refused at once' })
  @ApiOkResponse({ type: OkDto })
  @ApiNotFoundResponse({ description: 'No such API key (or it is not yours)' })
  async revoke(
    @CurrentUser() user: AuthUser,
    @Param('kid', new ResourceIdPipe('API key')) keyId: string,
  ): Promise<OkDto> {
    await this.apiKeys.revoke(user.id, keyId);
    return { ok: true };
  }
}
