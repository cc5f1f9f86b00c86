import { Body, Controller, Get, HttpCode, Post, UseGuards } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ThrottlerGuard } from '@nestjs/throttler';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { Public } from '../common/decorators/public.decorator';
import { AuthService } from './auth.service';
import { AccessTokenDto, AuthSessionDto, LoginDto, MeDto, RefreshDto, RegisterDto } from './dto/auth.dto';
import { OkDto } from '../common/dto/ok.dto';

@ApiTags('auth')
@Controller('api/auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  /** Creates an account on the free plan and opens a session. */
  @Public()
  @UseGuards(ThrottlerGuard)
  @Post('register')
  @ApiOperation({ summary: 'Register a new account' })
  @ApiBadRequestResponse({ description: 'A field is missing, invalid or not allowed' })
  @ApiConflictResponse({ description: 'The email is already registered' })
  @ApiTooManyRequestsResponse({ description: 'Too many attempts from this IP; see Retry-After' })
  register(@Body() body: RegisterDto): Promise<AuthSessionDto> {
    return this.auth.register(body);
  }

  @Public()
  @UseGuards(ThrottlerGuard)
  @Post('login')
  @HttpCode(200)
  @ApiOperation({ summary: 'Log in with email and password' })
  @ApiBadRequestResponse({ description: 'A field is missing or invalid' })
  @ApiUnauthorizedResponse({ description: 'Email or password is incorrect' })
  @ApiTooManyRequestsResponse({ description: 'Too many attempts from this IP; see Retry-After' })
  login(@Body() body: LoginDto): Promise<AuthSessionDto> {
    return this.auth.login(body);
  }

  @Public()
  @UseGuards(ThrottlerGuard)
  @Post('refresh')
  @HttpCode(200)
  @ApiOperation({ summary: 'Exchange a refresh token for a new access token' })
  @ApiBadRequestResponse({ description: 'refreshToken is missing or not a string' })
  @ApiUnauthorizedResponse({ description: 'The refresh token is unknown, expired or revoked' })
  @ApiTooManyRequestsResponse({ description: 'Too many attempts from this IP; see Retry-After' })
  refresh(@Body() body: RefreshDto): Promise<AccessTokenDto> {
    return this.auth.refresh(body.refreshToken);
  }

  @ApiBearerAuth()
  @Post('logout')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke a refresh token' })
  @ApiBadRequestResponse({ description: 'refreshToken is missing or not a string' })
  @ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
  async logout(@CurrentUser() user: AuthUser, @Body() body: RefreshDto): Promise<OkDto> {
    await this.auth.logout(user.id, body.refreshToken);
    return { ok: true };
  }

  @ApiBearerAuth()
  @Get('me')
  @ApiOperation({ summary: 'The current user' })
  @ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
  async me(@CurrentUser() user: AuthUser): Promise<MeDto> {
    return { user: await this.auth.me(user.id) };
  }
}
