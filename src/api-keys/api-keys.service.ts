import { EntityManager } from '@mikro-orm/postgresql';
import {
  BadRequestException,
  ConflictException,
  Injectable,
  Logger,
  NotFoundException,
  UnauthorizedException,
} from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { AuthUser } from '../common/decorators/current-user.decorator';
import { isStorableInstant } from '../common/storable-instant';
import { hashToken } from '../common/token-hash';
import { User } from '../model/user.entity';
import { revoked, Revocations } from '../access/revocations';
import { ApiKey } from '../model/api-key.entity';
import type { ApiKeyDto, CreateApiKeyDto, CreatedApiKeyResponseDto } from './dto/api-key.dto';

export const API_KEY_PREFIX = 'htk_';
/** Live keys per user: enough for every script and machine, and a bound on what one account can store. */
export const MAX_API_KEYS = 100;
const SHOWN_PREFIX_LENGTH = 12;
/** `last_used_at` is written at most this often per key and process, so a busy script costs no write per call. */
const LAST_USED_RESOLUTION_MS = 60_000;
const UNKNOWN_KEY = 'API key is unknown, expired or revoked';

export function isApiKey(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX);
}

function toApiKeyDto(key: ApiKey): ApiKeyDto {
  return {
    id: key.id,
    name: key.name,
    scope: key.scope,
    prefix: key.prefix,
    created_at: key.createdAt.toISOString(),
    expires_at: key.expiresAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
  };
}

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger(ApiKeysService.name);
  /** When this process last recorded each key's use. */
  private readonly recordedUse = new Map<string, number>();

  constructor(
    private readonly em: EntityManager,
    private readonly revocations: Revocations,
  ) {}

  async create(userId: string, input: CreateApiKeyDto): Promise<CreatedApiKeyResponseDto> {
    const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now())
      throw new BadRequestException('expires_at must be in the future');
    if (expiresAt && !isStorableInstant(expiresAt))
      throw new BadRequestException('expires_at must be before the year 10000');
    // The fork joins the transaction the call runs in (AuditInterceptor).
    const em = this.em.fork({ keepTransactionContext: true });
    if ((await em.count(ApiKey, { user: userId })) >= MAX_API_KEYS)
      throw new ConflictException(`you have ${MAX_API_KEYS} API keys, the most allowed: revoke one first`);
    const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    const apiKey = em.create(ApiKey, {
      user: em.getReference(User, userId),
      name: input.name,
      scope: input.scope ?? 'write',
      prefix: key.slice(0, SHOWN_PREFIX_LENGTH),
      keyHash: hashToken(key),
      expiresAt,
    });
    await em.persistAndFlush(apiKey);
    return { api_key: toApiKeyDto(apiKey), key };
  }

  async list(userId: string): Promise<ApiKeyDto[]> {
    const keys = await this.em.fork().find(ApiKey, { user: userId }, { orderBy: { createdAt: 'desc' } });
    return keys.map(toApiKeyDto);
  }

  /**
   * Deletes the key: the next request made with it is answered 401, in every process, and the live streams
   * opened with it end.
   */
  async revoke(userId: string, keyId: string): Promise<void> {
    const deleted = await this.em
      .fork({ keepTransactionContext: true })
      .nativeDelete(ApiKey, { id: keyId, user: userId });
    if (deleted === 0) throw new NotFoundException('API key not found');
    this.recordedUse.delete(keyId);
    await this.revocations.announce(revoked.apiKey(keyId));
  }

  /** The caller a key stands for; 401 when the key is unknown, revoked or expired. */
  async authenticate(key: string): Promise<AuthUser> {
    const apiKey = await this.em.fork().findOne(ApiKey, { keyHash: hashToken(key) }, { populate: ['user'] });
    if (!apiKey || (apiKey.expiresAt && apiKey.expiresAt.getTime() <= Date.now()))
      throw new UnauthorizedException(UNKNOWN_KEY);
    this.recordUse(apiKey.id);
    const { user } = apiKey;
    return {
      id: user.id,
      email: user.email,
      plan: user.plan,
      apiKey: { id: apiKey.id, scope: apiKey.scope, expiresAt: apiKey.expiresAt?.toISOString() ?? null },
    };
  }

  /** Records the use off the request's path; a failure to record costs the request nothing. */
  private recordUse(keyId: string): void {
    const now = Date.now();
    if (now - (this.recordedUse.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    if (this.recordedUse.size >= 10_000) this.recordedUse.clear();
    this.recordedUse.set(keyId, now);
    this.em
      .fork()
      .nativeUpdate(ApiKey, { id: keyId }, { lastUsedAt: new Date(now) })
      .catch((error: Error) => this.logger.warn(`could not record an API key's use: ${error.message}`));
  }
}
