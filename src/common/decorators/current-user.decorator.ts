import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Plan } from '../plans';

/** What the access guard puts on the request: the caller, read from a verified access token or API key. */
export interface AuthUser {
  id: string;
  email: string;
  plan: Plan;
  /** Set when the caller used an API key rather than a signed-in session. */
  apiKey?: { id: string; scope: 'read' | 'write'; expiresAt: string | null };
}

export const CurrentUser = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AuthUser =>
    context.switchToHttp().getRequest<{ user: AuthUser }>().user,
);
