import { Injectable } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import type { AuthUser } from '../common/decorators/current-user.decorator';

/** Rate limits per user (the caller's id) rather than per IP. */
@Injectable()
export class UserThrottlerGuard extends ThrottlerGuard {
  protected override async getTracker(request: { user?: AuthUser; ip?: string }): Promise<string> {
    return request.user ? `user:${request.user.id}` : `ip:${request.ip}`;
  }
}
