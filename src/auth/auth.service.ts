import { EntityManager } from '@mikro-orm/postgresql';
import { ConflictException, Injectable, UnauthorizedException } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import * as argon2 from 'argon2';
import { randomBytes } from 'node:crypto';
import { hashToken } from '../common/token-hash';
import { User } from '../model/user.entity';
import { normalizeEmail } from '../model/users.repository';
import type { AccessTokenDto, AuthSessionDto, LoginDto, RegisterDto, UserDto } from './dto/auth.dto';
import type { AccessTokenClaims } from './jwt.strategy';
import { RefreshToken } from '../model/refresh-token.entity';

export const ACCESS_TOKEN_TTL_S = 15 * 60;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;
/** OWASP's argon2id setting: 19 MiB, 2 iterations, 1 lane. */
const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
const INVALID_CREDENTIALS = 'email or password is incorrect';

export function toUserDto(user: User): UserDto {
  return { id: user.id, email: user.email, name: user.name, plan: user.plan };
}

@Injectable()
export class AuthService {
  /** Verified against when the email is unknown, so both failures take the same time. */
  private readonly decoyHash = argon2.hash(randomBytes(16).toString('hex'), ARGON2_OPTIONS);

  constructor(
    private readonly em: EntityManager,
    private readonly jwt: JwtService,
  ) {}

  async register(input: RegisterDto): Promise<AuthSessionDto> {
    const email = normalizeEmail(input.email);
    const user = this.em.create(User, {
      email,
      name: input.name,
      passwordHash: await argon2.hash(input.password, ARGON2_OPTIONS),
    });
    try {
      await this.em.persistAndFlush(user);
    } catch (error) {
      if ((error as { code?: string }).code === '23505')
        throw new ConflictException('email is already registered');
      throw error;
    }
    return this.openSession(user);
  }

  async login(input: LoginDto): Promise<AuthSessionDto> {
    const user = await this.em.findOne(
      User,
      { email: normalizeEmail(input.email) },
      { populate: ['passwordHash'] },
    );
    const valid = await argon2.verify(user?.passwordHash ?? (await this.decoyHash), input.password);
    if (!user || !valid) throw new UnauthorizedException(INVALID_CREDENTIALS);
    return this.openSession(user);
  }

  async refresh(refreshToken: string): Promise<AccessTokenDto> {
    const stored = await this.em.findOne(
      RefreshToken,
      { tokenHash: hashToken(refreshToken) },
      { populate: ['user'] },
    );
    if (!stored || stored.revokedAt || stored.expiresAt.getTime() <= Date.now()) {
      throw new UnauthorizedException('refresh token is unknown, expired or revoked');
    }
    return { accessToken: await this.signAccessToken(stored.user) };
  }

  /** Revokes the refresh token when it belongs to the caller; answers the same either way. */
  async logout(userId: string, refreshToken: string): Promise<void> {
    await this.em.nativeUpdate(
      RefreshToken,
      { tokenHash: hashToken(refreshToken), user: userId, revokedAt: null },
      { revokedAt: new Date() },
    );
  }

  async me(userId: string): Promise<UserDto> {
    const user = await this.em.findOne(User, { id: userId });
    if (!user) throw new UnauthorizedException('the account no longer exists');
    return toUserDto(user);
  }

  private async openSession(user: User): Promise<AuthSessionDto> {
    const refreshToken = randomBytes(32).toString('base64url');
    this.em.create(RefreshToken, {
      user,
      tokenHash: hashToken(refreshToken),
      expiresAt: new Date(Date.now() + REFRESH_TOKEN_TTL_MS),
    });
    await this.em.flush();
    return { user: toUserDto(user), accessToken: await this.signAccessToken(user), refreshToken };
  }

  private signAccessToken(user: User): Promise<string> {
    const claims: AccessTokenClaims = { sub: user.id, email: user.email, plan: user.plan, typ: 'access' };
    return this.jwt.signAsync(claims, { algorithm: 'HS256', expiresIn: ACCESS_TOKEN_TTL_S });
  }
}
