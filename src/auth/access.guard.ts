import { type ExecutionContext, ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { RouteAuthorizer } from '../access/route-authorizer';
import { ApiKeysService, isApiKey } from '../api-keys/api-keys.service';
import type { AuthUser } from '../common/decorators/current-user.decorator';
import { IS_PUBLIC } from '../common/decorators/public.decorator';
import { NOT_FOR_API_KEYS } from '../access/not-for-api-keys.decorator';

/** What an API key with the `read` scope may call. */
const READ_METHODS = new Set(['GET', 'HEAD']);

interface GuardedRequest {
  method: string;
  headers: { authorization?: string };
  user?: AuthUser;
}

function bearerToken(request: GuardedRequest): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  return match?.[1];
}

/**
 * Global guard: every route needs a valid access token (a JWT, through passport) or API key unless it is
 * marked @Public(). An API key is refused where the route is @NotForApiKeys(), and a `read` key on any
 * method but GET and HEAD. Once the caller is known, the route's @Can and @RequiresPlan are judged
 * (RouteAuthorizer).
 */
@Injectable()
export class AccessGuard extends AuthGuard('jwt') {
  constructor(
    private readonly reflector: Reflector,
    private readonly apiKeys: ApiKeysService,
    private readonly authorizer: RouteAuthorizer,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.marked(IS_PUBLIC, context)) return true;
    const request = context.switchToHttp().getRequest<GuardedRequest>();
    const token = bearerToken(request);
    request.user =
      token !== undefined && isApiKey(token)
        ? await this.apiKeyCaller(token, request.method, context)
        : await this.sessionCaller(context, request);
    await this.authorizer.authorize(context, request.user);
    return true;
  }

  /** The caller of a signed-in session, through passport (401 unless the access token is valid). */
  private async sessionCaller(context: ExecutionContext, request: GuardedRequest): Promise<AuthUser> {
    await super.canActivate(context);
    return request.user as AuthUser;
  }

  private async apiKeyCaller(token: string, method: string, context: ExecutionContext): Promise<AuthUser> {
    const caller = await this.apiKeys.authenticate(token);
    if (this.marked(NOT_FOR_API_KEYS, context))
      throw new ForbiddenException('API keys cannot manage API keys: sign in with your password');
    if (caller.apiKey?.scope === 'read' && !READ_METHODS.has(method))
      throw new ForbiddenException('this API key is read-only: it may only make GET requests');
    return caller;
  }

  override handleRequest<TUser>(error: unknown, user: TUser | false): TUser {
    if (error || !user) throw new UnauthorizedException('a valid access token is required');
    return user;
  }

  private marked(key: string, context: ExecutionContext): boolean {
    return Boolean(
      this.reflector.getAllAndOverride<boolean>(key, [context.getHandler(), context.getClass()]),
    );
  }
}
