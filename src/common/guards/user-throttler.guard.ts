import { type ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import type { AuthUser } from '../decorators/current-user.decorator';

/**
 * Rate limits per user (the caller's id) rather than per IP, one count for all the routes of a controller
 * it guards (the AI routes share one limit: each uncached call may cost Gemini quota, whichever route
 * makes it; a notification channel's test sends a message to its target).
 */
@Injectable()
export class UserThrottlerGuard extends ThrottlerGuard {
  protected override async getTracker(request: { user?: AuthUser; ip?: string }): Promise<string> {
    return request.user ? `user:${request.user.id}` : `ip:${request.ip}`;
  }

  protected override generateKey(context: ExecutionContext, suffix: string, name: string): string {
    return `${context.getClass().name}-${name}-${suffix}`;
  }

  protected override async getErrorMessage(): Promise<string> {
    return 'too many calls from this user; retry after the time in Retry-After';
  }
}
