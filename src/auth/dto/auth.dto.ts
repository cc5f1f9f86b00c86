import { ApiProperty } from '@nestjs/swagger';
import { IsEmail, IsString, Length, MaxLength } from 'class-validator';
import { PLANS, type Plan } from '../../common/plans';
import { Trim, trimmedLengthMessage } from '../../common/dto/fields';

export class RegisterDto {
  /** Email address; trimmed and compared case-insensitively. */
  @Trim()
  @IsEmail({}, { message: 'email must be a valid email address' })
  @MaxLength(254)
  email!: string;

  /** Display name, 1 to 100 characters (trimmed). */
  @Trim()
  @IsString()
  @Length(1, 100, { message: trimmedLengthMessage('name', 100) })
  name!: string;

  /** 8 to 128 characters. */
  @IsString()
  @Length(8, 128, { message: 'password must be 8 to 128 characters' })
  password!: string;
}

export class LoginDto {
  @Trim()
  @IsString()
  @MaxLength(254)
  email!: string;

  @IsString()
  @MaxLength(128)
  password!: string;
}

export class RefreshDto {
  /** The refresh token issued at register or login. */
  @IsString()
  @MaxLength(200)
  refreshToken!: string;
}

export class UserDto {
  id!: string;
  email!: string;
  name!: string;
  @ApiProperty({ enum: PLANS })
  plan!: Plan;
}

export class AuthSessionDto {
  user!: UserDto;
  /** JWT (HS256), valid 15 minutes. */
  accessToken!: string;
  /** Opaque, valid 30 days; exchange it at /api/auth/refresh. */
  refreshToken!: string;
}

export class AccessTokenDto {
  accessToken!: string;
}

export class MeDto {
  user!: UserDto;
}
